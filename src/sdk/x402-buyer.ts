/**
 * `createX402Buyer`: runs the x402 exchange for a Treasury-managed wallet. Send the request; on a 402, read
 * the challenge (`PAYMENT-REQUIRED`, `X-PAYMENT-REQUIRED` or the JSON body), pick the first accepts entry
 * this buyer can pay (scheme `exact` on the wallet's network, with the token's EIP-712 name and version),
 * check the price against `maxPriceUsd`, have Treasury sign it (policy checked and the spend recorded there),
 * and retry once with the payment in the challenge's dialect (`PAYMENT-SIGNATURE` for v2 headers,
 * `X-PAYMENT` for the spec's `X-PAYMENT-REQUIRED`).
 *
 * Defends against: paying more than the caller's cap (checked in integer micro-USD before anything is
 * signed; never raised silently); paying for something the wallet cannot settle (NoCompatibleAcceptError);
 * a settled payment whose content was refused going unnoticed (PaymentRejectedError, never retried).
 * Does not defend against: a seller that takes the payment and serves wrong content (the receipt and the
 * on-chain transfer are the evidence); prices in tokens other than 6-decimal USD stablecoins.
 */
import { formatUsd, parseUsd } from '../../policy/money.js';
import { decodePaymentRequired, decodeSettlementReceipt, encodePaymentPayload, X402_HEADERS } from '../x402/header-codec.js';
import { paymentRequiredSchema, type PaymentRequired, type PaymentRequirements, type SettlementReceipt } from '../x402/wire-schemas.js';
import {
  InsufficientBudgetError,
  InvalidChallengeError,
  NoCompatibleAcceptError,
  PatCapReachedError,
  PaymentRejectedError,
  ReauthenticateError,
  TreasuryApiError,
  X402PaymentFailedError,
} from './sdk-errors.js';
import type { FetchLike, SignedPayment, TreasuryClient } from './treasury-client.js';

export interface X402BuyerOptions {
  client: TreasuryClient;
  walletId: string;
  /** Highest price this buyer pays per request, USD decimal string ("0.05"). No cap when omitted. */
  maxPriceUsd?: string;
  /** Capability sent with each pay (matched against the wallet's capability caps). */
  capability?: string;
  /** CAIP-2 networks to pay on; default the wallet's own network. `eip155:*` matches any EVM network. */
  networks?: string[];
  /** Schemes to pay with; default ['exact'] (the only one Treasury signs). */
  schemes?: string[];
  fetch?: FetchLike;
}

export interface X402RequestInit {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as is on both attempts, so it must be replayable (no streams). */
  body?: string | Uint8Array;
}

export interface X402Result {
  status: number;
  headers: Headers;
  body: string;
  /** True when a payment was sent and the seller answered 2xx. */
  paid: boolean;
  receipt?: SettlementReceipt & { amount_raw: string; amount_usd: string };
  /** The accepts entry that was paid. */
  requirements?: PaymentRequirements;
  /** What Treasury signed (authorization, decision and authorization ids). */
  payment?: SignedPayment;
}

export interface X402Buyer {
  request(url: string, init?: X402RequestInit): Promise<X402Result>;
  /** The same exchange as a fetch: the final response (status, headers without encoding, body). */
  fetch(url: string, init?: X402RequestInit): Promise<Response>;
}

function readChallenge(response: Response, bodyText: string): { challenge: PaymentRequired; dialect: 'v2' | 'spec' } {
  const v2 = response.headers.get(X402_HEADERS.paymentRequired);
  const spec = response.headers.get(X402_HEADERS.paymentRequiredLegacy);
  try {
    if (v2) return { challenge: decodePaymentRequired(v2), dialect: 'v2' };
    if (spec) return { challenge: decodePaymentRequired(spec), dialect: 'spec' };
  } catch (err) {
    throw new InvalidChallengeError(`The 402 challenge header could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    throw new InvalidChallengeError('The seller answered 402 without an x402 challenge.');
  }
  const parsed = paymentRequiredSchema.safeParse(json);
  if (!parsed.success) throw new InvalidChallengeError('The 402 body is not an x402 v2 challenge.');
  return { challenge: parsed.data, dialect: 'v2' };
}

function networkMatches(patterns: readonly string[], network: string): boolean {
  return patterns.some((p) => p === network || (p.endsWith(':*') && network.startsWith(p.slice(0, -1))));
}

/** The first entry this buyer can pay, in the seller's order. */
export function selectAccept(accepts: readonly PaymentRequirements[], networks: readonly string[], schemes: readonly string[]): PaymentRequirements | undefined {
  return accepts.find((a) => schemes.includes(a.scheme) && networkMatches(networks, a.network) && !!a.extra?.name && !!a.extra?.version);
}

/** Refuses a price above the cap; amounts are raw 6-decimal units, so one unit is one micro-USD. */
export function checkBudget(requirements: PaymentRequirements, maxPriceUsd: string | undefined): void {
  if (maxPriceUsd === undefined) return;
  const cap = parseUsd(maxPriceUsd);
  const price = BigInt(requirements.amount);
  if (price > cap) throw new InsufficientBudgetError(formatUsd(price), formatUsd(cap), requirements);
}

/** Treasury errors with a recovery the buyer knows; anything else is re-raised as it came. */
function mapPayError(err: unknown): unknown {
  if (!(err instanceof TreasuryApiError) || !err.recovery) return err;
  if (err.recovery.kind === 'raise_pat_cap') return new PatCapReachedError(err);
  if (err.recovery.kind === 'reauthenticate') return new ReauthenticateError(err);
  return err;
}

export function createX402Buyer(options: X402BuyerOptions): X402Buyer {
  const doFetch: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const schemes = options.schemes ?? ['exact'];
  if (options.maxPriceUsd !== undefined) parseUsd(options.maxPriceUsd); // a malformed cap fails here, not mid-payment
  let walletNetwork: Promise<string> | undefined;
  const networks = async () => options.networks ?? [await (walletNetwork ??= options.client.getWallet(options.walletId).then((w) => w.network))];

  async function request(url: string, init: X402RequestInit = {}): Promise<X402Result> {
    const base: RequestInit = { method: init.method ?? 'GET', headers: { ...init.headers }, ...(init.body !== undefined ? { body: init.body } : {}) };
    const first = await doFetch(url, base);
    const firstBody = await first.text();
    if (first.status !== 402) return { status: first.status, headers: first.headers, body: firstBody, paid: false };

    const { challenge, dialect } = readChallenge(first, firstBody);
    const requirements = selectAccept(challenge.accepts, await networks(), schemes);
    if (!requirements) throw new NoCompatibleAcceptError(challenge.accepts);
    checkBudget(requirements, options.maxPriceUsd);

    let payment: SignedPayment;
    try {
      payment = await options.client.pay(options.walletId, { paymentRequirements: requirements, ...(options.capability ? { capability: options.capability } : {}) });
    } catch (err) {
      throw mapPayError(err);
    }
    const header = encodePaymentPayload({
      x402Version: 2,
      resource: challenge.resource,
      accepted: requirements,
      payload: { signature: payment.signature, authorization: payment.authorization },
    });
    const headerName = dialect === 'v2' ? X402_HEADERS.paymentSignature : X402_HEADERS.paymentLegacy;
    const second = await doFetch(url, { ...base, headers: { ...init.headers, [headerName]: header } });
    const secondBody = await second.text();
    const receiptHeader = second.headers.get(X402_HEADERS.paymentResponse) ?? second.headers.get(X402_HEADERS.paymentResponseLegacy);
    let receipt: SettlementReceipt | undefined;
    if (receiptHeader) {
      try {
        receipt = decodeSettlementReceipt(receiptHeader);
      } catch {
        receipt = undefined;
      }
    }
    const settled = receipt?.success === true && !!receipt.transaction;
    if (second.status >= 200 && second.status < 300) {
      return {
        status: second.status,
        headers: second.headers,
        body: secondBody,
        paid: true,
        ...(receipt ? { receipt: { ...receipt, amount_raw: requirements.amount, amount_usd: formatUsd(BigInt(requirements.amount)) } } : {}),
        requirements,
        payment,
      };
    }
    if (settled) throw new PaymentRejectedError(second.status, secondBody, receipt);
    let reason = receipt?.errorReason ?? `HTTP ${second.status}`;
    try {
      const j = JSON.parse(secondBody) as { error?: unknown; error_code?: unknown };
      if (typeof j.error === 'string') reason = j.error;
      else if (typeof j.error_code === 'string') reason = j.error_code;
    } catch {
      // not JSON: keep the receipt's reason
    }
    throw new X402PaymentFailedError(second.status, reason, secondBody);
  }

  return {
    request,
    async fetch(url, init) {
      const r = await request(url, init);
      const headers = new Headers(r.headers);
      headers.delete('content-encoding');
      headers.delete('content-length');
      const nullBody = r.status === 204 || r.status === 304;
      return new Response(nullBody ? null : r.body, { status: r.status, headers });
    },
  };
}
