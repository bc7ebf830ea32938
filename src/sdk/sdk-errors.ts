/**
 * The buyer SDK's errors (docs/buyer-sdk.md). All extend `TreasurySdkError` and carry a stable
 * `code`; none carries a bearer token or a signature.
 *
 * When each is raised, and what it means for money:
 * - before anything is signed: `InvalidArgumentError`, `TreasuryKeyMissingError`, `InvalidChallengeError`,
 *   `ChallengeOriginMismatchError`, `NoCompatibleAcceptError`, `InsufficientBudgetError`;
 * - Treasury refused to sign: `TreasuryApiError` (and `PatCapReachedError` / `ReauthenticateError` for the
 *   recovery kinds the SDK knows; any other kind is re-raised as the original `TreasuryApiError`);
 * - signed but not settled: `X402PaymentFailedError`, or `InsufficientFundsError` when the wallet is short
 *   of the price;
 * - settled, then refused by the seller: `PaymentRejectedError` — irreversible, callers must not retry it
 *   blindly (a retry pays again);
 * - the seller's answer longer than the buyer reads: `ResponseTooLargeError` — before anything is signed
 *   (`payment_sent: false`), or after the payment was sent (`payment_sent: true`: the seller may have settled;
 *   the purchase is kept, so the same purchase key sends that same payment again, never a second).
 */
import { z } from 'zod';
import { BaseError } from '../../base/base-error.js';
import type { PaymentRequirements } from '../x402/wire-schemas.js';
import type { X402Receipt } from './x402-result.js';

/** The recovery block as the API sends it (docs/api.md#errors); `kind` is what clients branch on. */
export const recoverySchema = z.object({ kind: z.string().min(1).max(64) }).loose();
export type Recovery = z.infer<typeof recoverySchema>;

/** The error body of the Treasury API (`{error_code, user_message, request_id, recovery?, …}`). Each field is read on its own. */
const errorBodySchema = z
  .object({
    error_code: z.string().min(1).max(128).optional().catch(undefined),
    reason: z.string().min(1).max(128).optional().catch(undefined),
    error: z.string().min(1).max(128).optional().catch(undefined),
    user_message: z.string().max(4096).optional().catch(undefined),
    decision_id: z.string().max(64).optional().catch(undefined),
    recovery: recoverySchema.optional().catch(undefined),
  })
  .loose();

/**
 * The SDK's base error, in the shape of base/base-error.ts: `code`, `details` (fields, `{}` when none),
 * `cause`, and `walk()` to find e.g. the `TreasuryApiError` behind a `PatCapReachedError`.
 */
export class TreasurySdkError extends BaseError<string> {
  constructor(
    code: string,
    message: string,
    options?: { cause?: unknown; details?: Readonly<Record<string, unknown>> },
  ) {
    super(code, { message, cause: options?.cause, details: options?.details });
    this.name = new.target.name;
  }
}

/** An argument of an SDK call failed its schema; `field` names it. Nothing was sent. */
export class InvalidArgumentError extends TreasurySdkError {
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super('invalid_argument', `Invalid ${field}: ${detail}`, { details: { field } });
  }
}

/** A Treasury call without a Treasury bearer (PAT with the treasury or agent scope, or an api key). */
export class TreasuryKeyMissingError extends TreasurySdkError {
  constructor() {
    super('treasury_key_missing', 'No Treasury bearer: pass `token` (a Treasury-capable PAT) to TreasuryClient.');
  }
}

/** Treasury did not answer (connection refused, DNS, time-out). Nothing is known to be signed. */
export class TreasuryUnreachableError extends TreasurySdkError {
  constructor(apiUrl: string, cause: unknown) {
    super(
      'treasury_unreachable',
      `Treasury at ${apiUrl} did not answer: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/** Treasury answered 2xx with a body that fails the SDK's schema; it is never used (e.g. as a signature). */
export class InvalidTreasuryReplyError extends TreasurySdkError {
  constructor(what: string, detail: string) {
    super('invalid_treasury_reply', `Treasury answered ${what} with an unexpected body (${detail}).`);
  }
}

/** Treasury answered non-2xx. The SDK never refreshes or retries on 401 (docs/buyer-sdk.md): the caller decides. */
export class TreasuryApiError extends TreasurySdkError {
  readonly status: number;
  readonly userMessage: string;
  readonly recovery: Recovery | undefined;
  /** `pd_…` for a policy denial (also in Treasury's audit ledger). */
  readonly decisionId: string | undefined;
  /** The body as received: parsed JSON, or the text when it is not JSON. */
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    const parsed = errorBodySchema.safeParse(body);
    const b = parsed.success ? parsed.data : {};
    const code = b.error_code ?? b.reason ?? b.error ?? `http_${status}`;
    const userMessage = b.user_message ?? `Treasury answered HTTP ${status}.`;
    super(code, userMessage);
    this.status = status;
    this.userMessage = userMessage;
    this.recovery = b.recovery;
    this.decisionId = b.decision_id;
    this.body = body;
  }
}

/**
 * 429 `MGMT_6014`, recovery `raise_pat_cap`: the buyer PAT's daily cap is reached. Show `user_message`
 * unchanged and link `settings_url` (docs/buyer-sdk.md); both are the server's, untouched.
 */
export class PatCapReachedError extends TreasurySdkError {
  readonly userMessage: string;
  readonly settingsUrl: string | undefined;
  readonly currentCapUsd: string | undefined;
  readonly attemptedAmountUsd: string | undefined;
  readonly recovery: Recovery;

  constructor(readonly apiError: TreasuryApiError) {
    super('MGMT_6014', apiError.userMessage, { cause: apiError });
    const r = apiError.recovery ?? { kind: 'raise_pat_cap' };
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    this.userMessage = apiError.userMessage;
    this.recovery = r;
    this.settingsUrl = str(r.settings_url);
    this.currentCapUsd = str(r.current_cap_usd);
    this.attemptedAmountUsd = str(r.attempted_amount_usd);
  }

  /** The server's `user_message`, unchanged. */
  get user_message(): string {
    return this.userMessage;
  }

  /** The server's `recovery.settings_url`, unchanged. */
  get settings_url(): string | undefined {
    return this.settingsUrl;
  }
}

/** Recovery `reauthenticate`: the bearer is unknown, expired or revoked; sign in again (`recovery` says how). */
export class ReauthenticateError extends TreasurySdkError {
  readonly userMessage: string;
  readonly recovery: Recovery;

  constructor(readonly apiError: TreasuryApiError) {
    super('reauthenticate', apiError.userMessage, { cause: apiError });
    this.userMessage = apiError.userMessage;
    this.recovery = apiError.recovery ?? { kind: 'reauthenticate' };
  }

  get user_message(): string {
    return this.userMessage;
  }
}

/** The price is above `maxPriceUsd`. Nothing was signed; the cap is never raised silently. */
/**
 * 412 `permit2_allowance_required`: the accepts entry is `upto` and the wallet has not approved Permit2 to
 * move enough of the token (a one-time on-chain `approve(Permit2, …)` from the wallet). Nothing was signed or
 * recorded. The figures are Treasury's, untouched.
 */
export class Permit2AllowanceRequiredError extends TreasurySdkError {
  readonly userMessage: string;
  readonly owner: string | undefined;
  readonly token: string | undefined;
  readonly spender: string | undefined;
  readonly allowanceRaw: string | undefined;
  readonly requiredRaw: string | undefined;

  constructor(readonly apiError: TreasuryApiError) {
    super('permit2_allowance_required', apiError.userMessage, { cause: apiError });
    const b = (typeof apiError.body === 'object' && apiError.body !== null ? apiError.body : {}) as Record<
      string,
      unknown
    >;
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    this.userMessage = apiError.userMessage;
    this.owner = str(b.owner);
    this.token = str(b.token);
    this.spender = str(b.spender);
    this.allowanceRaw = str(b.allowance_raw);
    this.requiredRaw = str(b.required_raw);
  }
}

export class InsufficientBudgetError extends TreasurySdkError {
  /** Recovery `raise_max_amount`: what the seller asks and the budget that refused it. */
  readonly recovery: { kind: 'raise_max_amount'; required_amount_usd: string; current_max_amount_usd: string };

  constructor(
    readonly requested_usd: string,
    readonly cap_usd: string,
    readonly requirements: PaymentRequirements,
  ) {
    super(
      'insufficient_budget',
      `The price ${requested_usd} USD is above the cap of ${cap_usd} USD; nothing was paid.`,
    );
    this.recovery = { kind: 'raise_max_amount', required_amount_usd: requested_usd, current_max_amount_usd: cap_usd };
  }
}

/** No accepts entry matches the schemes and networks this buyer can pay with; carries the challenge's accepts. */
export class NoCompatibleAcceptError extends TreasurySdkError {
  /**
   * Recovery `use_alternate_scheme`: the schemes and networks the seller offered (each once, in the seller's
   * order), and the networks this buyer pays on (its wallet's, the one it was told to use, or its patterns).
   */
  readonly recovery: {
    kind: 'use_alternate_scheme';
    offered_schemes: string[];
    offered_networks: string[];
    payable_networks: string[];
  };

  constructor(
    readonly accepts: PaymentRequirements[],
    payableNetworks: readonly string[] = [],
    /** Some entries name a token this buyer does not pay in (`assets`, or USDC by default: buyer-assets.ts). */
    otherAssets = false,
  ) {
    const offered = [...new Set(accepts.map((a) => `${a.scheme}@${a.network}`))].join(', ');
    const payable = payableNetworks.length > 0 ? `; this buyer pays on ${payableNetworks.join(', ')}` : '';
    const assets = otherAssets ? '; some name another token than this buyer pays in' : '';
    super(
      'no_compatible_accept',
      `None of the ${accepts.length} payment options can be paid by this buyer (offered: ${offered}${payable}${assets}).`,
      { details: { offered: accepts.map((a) => ({ scheme: a.scheme, network: a.network, amount: a.amount })) } },
    );
    this.recovery = {
      kind: 'use_alternate_scheme',
      offered_schemes: [...new Set(accepts.map((a) => a.scheme))],
      offered_networks: [...new Set(accepts.map((a) => a.network))],
      payable_networks: [...payableNetworks],
    };
  }
}

/** The facilitator settled, but the seller answered non-2xx. Settlement is irreversible. */
export class PaymentRejectedError extends TreasurySdkError {
  constructor(
    readonly status_code: number,
    readonly body: string,
    /** The decoded receipt (undefined when the header could not be read). */
    readonly receipt: Partial<X402Receipt> | undefined,
  ) {
    super(
      'payment_rejected',
      `The payment settled but the seller answered HTTP ${status_code}; settlement is irreversible.`,
    );
  }
}

/** The seller did not take the signed payment (a 402 again, or a refusal without a settlement receipt). */
export class X402PaymentFailedError extends TreasurySdkError {
  constructor(
    readonly status_code: number,
    /** The seller's reason: the receipt's errorReason, the re-issued challenge's error, or the body's error. */
    readonly reason: string,
    readonly body: string,
  ) {
    super('payment_failed', `The seller did not accept the payment (HTTP ${status_code}: ${reason}).`);
  }
}

/**
 * The seller did not take the payment, and the wallet holds less than the price (read from Treasury right
 * after the failure): nothing moved. `recovery` is `fund_wallet` (docs/api.md#errors): `shortfall_usd`, the `chain`
 * (CAIP-2), a `deposit_uri` (EIP-681: a USDC transfer of the shortfall to the wallet) and, on Base, a
 * `deposit_url` (the address on the block explorer). `paymentFailure` is the seller's refusal itself.
 */
export class InsufficientFundsError extends TreasurySdkError {
  readonly recovery: {
    kind: 'fund_wallet';
    deposit_url?: string;
    deposit_uri: string;
    shortfall_usd: string;
    chain: string;
  };

  constructor(
    readonly paymentFailure: X402PaymentFailedError,
    readonly wallet: { address: string; network: string; asset: string; balance_usd: string },
    shortfall: { raw: bigint; usd: string },
  ) {
    super(
      'insufficient_funds',
      `The wallet holds ${wallet.balance_usd} USD, ${shortfall.usd} USD short of the price; nothing was paid.`,
      { cause: paymentFailure },
    );
    const chainId = /^eip155:(\d+)$/.exec(wallet.network)?.[1];
    const explorer =
      chainId === '8453' ? 'https://basescan.org' : chainId === '84532' ? 'https://sepolia.basescan.org' : undefined;
    this.recovery = {
      kind: 'fund_wallet',
      ...(explorer ? { deposit_url: `${explorer}/address/${wallet.address}` } : {}),
      // A Solana Pay transfer request on Solana (the shortfall in USDC, 6 decimals); EIP-681 on EVM chains.
      deposit_uri: wallet.network.startsWith('solana:')
        ? `solana:${wallet.address}?amount=${shortfall.usd}&spl-token=${wallet.asset}`
        : `ethereum:${wallet.asset}${chainId ? `@${chainId}` : ''}/transfer?address=${wallet.address}&uint256=${shortfall.raw}`,
      shortfall_usd: shortfall.usd,
      chain: wallet.network,
    };
  }
}

/**
 * The seller's answer was longer than the buyer reads (`maxChallengeBytes` for a 402, `maxResponseBytes` for any
 * other answer: createX402Buyer's options); reading stopped at `limit_bytes`. `payment_sent`: whether it was the
 * answer to a signed payment — then the seller may have settled, and the purchase stays in the buyer's store.
 */
export class ResponseTooLargeError extends TreasurySdkError {
  constructor(
    readonly status_code: number,
    readonly limit_bytes: number,
    readonly payment_sent: boolean,
  ) {
    super(
      'response_too_large',
      `The seller's answer (HTTP ${status_code}) is longer than ${limit_bytes} bytes; reading stopped there. ${
        payment_sent
          ? 'A payment was sent: the same purchase key sends that same payment again, never a second.'
          : 'Nothing was signed.'
      }`,
      { details: { status_code, limit_bytes, payment_sent } },
    );
  }
}

/** The seller's 402 could not be read as an x402 v2 challenge (header or body). */
export class InvalidChallengeError extends TreasurySdkError {
  constructor(message: string) {
    super('invalid_challenge', message);
  }
}

/**
 * The 402 came from another origin than the one the payment would be sent to (`where: 'redirect'`: the unpaid
 * request was redirected there), or the challenge names a resource on another origin (`where: 'resource'`).
 * Signing it would hand that origin's payment to another: nothing was signed or sent. `paid_origin` is the
 * origin the payment would have gone to, `challenge_origin` the other one (null when the resource URL is not
 * a URL).
 */
export class ChallengeOriginMismatchError extends TreasurySdkError {
  constructor(
    readonly where: 'redirect' | 'resource',
    readonly paidOrigin: string,
    readonly challengeOrigin: string | null,
  ) {
    super(
      'challenge_origin_mismatch',
      where === 'redirect'
        ? `The request to ${paidOrigin} was redirected to ${challengeOrigin ?? 'another origin'}, which asked for payment; nothing was signed or sent.`
        : `The challenge from ${paidOrigin} is for a resource on ${challengeOrigin ?? 'an unreadable URL'}; nothing was signed or sent.`,
      { details: { where, paid_origin: paidOrigin, challenge_origin: challengeOrigin } },
    );
  }
}

/** A viem caller asked the Treasury account for something other than EIP-3009 TransferWithAuthorization. */
export class UnsupportedSignatureError extends TreasurySdkError {
  constructor(message: string) {
    super('unsupported_signature', message);
  }
}

/** Treasury signed other terms than the ones asked for; the signature is withheld. */
export class SignatureMismatchError extends TreasurySdkError {
  constructor(detail: string) {
    super(
      'signature_mismatch',
      `Treasury signed a different authorization than the one requested (${detail}); the signature is withheld.`,
    );
  }
}
