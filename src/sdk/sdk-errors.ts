/**
 * The buyer SDK's errors (spec §7, client-side names). Each has a stable `code`; none carries a token.
 * `InsufficientBudgetError` and `NoCompatibleAcceptError` are raised before anything is signed;
 * `PaymentRejectedError` after a settlement (irreversible), so callers must not retry it blindly.
 */
import type { PaymentRequirements } from '../x402/wire-schemas.js';

/** Spec §2.8 recovery block, as the API sends it. */
export interface Recovery {
  kind: string;
  [field: string]: unknown;
}

export class TreasurySdkError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A Treasury call without a Treasury bearer (PAT with the treasury or agent scope, or an api key). */
export class TreasuryKeyMissingError extends TreasurySdkError {
  constructor() {
    super('treasury_key_missing', 'No Treasury bearer: pass `token` (a Treasury-capable PAT) to TreasuryClient.');
  }
}

/** Treasury answered non-2xx. The SDK never refreshes on 401 (spec §5.7): the caller decides. */
export class TreasuryApiError extends TreasurySdkError {
  readonly status: number;
  readonly userMessage: string;
  readonly recovery: Recovery | undefined;
  readonly decisionId: string | undefined;
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const code = typeof b.error_code === 'string' ? b.error_code : typeof b.reason === 'string' ? b.reason : `http_${status}`;
    const userMessage = typeof b.user_message === 'string' ? b.user_message : `Treasury answered HTTP ${status}`;
    super(code, userMessage);
    this.status = status;
    this.userMessage = userMessage;
    this.recovery = b.recovery && typeof b.recovery === 'object' && typeof (b.recovery as Recovery).kind === 'string' ? (b.recovery as Recovery) : undefined;
    this.decisionId = typeof b.decision_id === 'string' ? b.decision_id : undefined;
    this.body = body;
  }
}

/** MGMT_6014: the buyer PAT's daily cap is reached. Show `userMessage` unchanged and link `settingsUrl`. */
export class PatCapReachedError extends TreasurySdkError {
  readonly userMessage: string;
  readonly settingsUrl: string | undefined;
  readonly currentCapUsd: string | undefined;
  readonly attemptedAmountUsd: string | undefined;
  readonly recovery: Recovery;

  constructor(cause: TreasuryApiError) {
    super('MGMT_6014', cause.userMessage, { cause });
    const r = cause.recovery!;
    this.userMessage = cause.userMessage;
    this.recovery = r;
    this.settingsUrl = typeof r.settings_url === 'string' ? r.settings_url : undefined;
    this.currentCapUsd = typeof r.current_cap_usd === 'string' ? r.current_cap_usd : undefined;
    this.attemptedAmountUsd = typeof r.attempted_amount_usd === 'string' ? r.attempted_amount_usd : undefined;
  }
}

/** The bearer is gone (revoked, expired or unknown): sign in again. */
export class ReauthenticateError extends TreasurySdkError {
  readonly userMessage: string;
  constructor(cause: TreasuryApiError) {
    super('reauthenticate', cause.userMessage, { cause });
    this.userMessage = cause.userMessage;
  }
}

/** The price is above `maxPriceUsd`. The cap is never raised silently. */
export class InsufficientBudgetError extends TreasurySdkError {
  constructor(
    readonly requested_usd: string,
    readonly cap_usd: string,
    readonly requirements: PaymentRequirements,
  ) {
    super('insufficient_budget', `The price ${requested_usd} USD is above the cap of ${cap_usd} USD.`);
  }
}

/** No accepts entry matches the schemes and networks this buyer can pay with. */
export class NoCompatibleAcceptError extends TreasurySdkError {
  constructor(readonly accepts: PaymentRequirements[]) {
    super('no_compatible_accept', `None of the ${accepts.length} payment options can be paid by this buyer (schemes/networks).`);
  }
}

/** The facilitator settled, but the seller answered non-2xx. Settlement is irreversible. */
export class PaymentRejectedError extends TreasurySdkError {
  constructor(
    readonly status_code: number,
    readonly body: string,
    readonly receipt: unknown,
  ) {
    super('payment_rejected', `The payment settled but the seller answered HTTP ${status_code}.`);
  }
}

/** The seller refused the payment without settling it (a 402 again, or another status without a receipt). */
export class X402PaymentFailedError extends TreasurySdkError {
  constructor(
    readonly status_code: number,
    readonly reason: string,
    readonly body: string,
  ) {
    super('payment_failed', `The seller did not accept the payment (HTTP ${status_code}: ${reason}).`);
  }
}

/** The seller's 402 could not be read as an x402 challenge. */
export class InvalidChallengeError extends TreasurySdkError {
  constructor(message: string) {
    super('invalid_challenge', message);
  }
}
