/**
 * The `payment-identifier` rule of the paywall (./paid-request.ts, between matching the payment to the terms and
 * the replay guard, so before verify): a payment carrying an id is looked up in the store before anything is
 * verified or settled.
 *   - the id is malformed → 400 `payment_identifier_invalid`; the seller declared `required: true` and there is
 *     no id → 400 `payment_identifier_required` (nothing stored either way);
 *   - the same id with the same fingerprint (./payment-identifier-fingerprint.ts: payer, method, path+query,
 *     accepted requirements, body hash and the whole signed payload) already answered → that answer again
 *     (status, the raw body bytes with the headers that say what they are — `REPLAYED_HEADERS` below —,
 *     `PAYMENT-RESPONSE` + `X-PAYMENT-RESPONSE`), nothing verified, settled or run; kept without its body
 *     (larger than `max_answer_bytes`, or streamed) → 410 `payment_identifier_not_replayable` with the receipt
 *     headers;
 *   - the same id with the same fingerprint still in flight → 409 `payment_identifier_in_flight` (Retry-After 1);
 *   - the same id with another fingerprint → 409 `payment_identifier_conflict`;
 *   - the store unreachable → 503 `payment_identifier_unavailable` (an id is a promise not to pay twice: without
 *     the store it cannot be kept, so nothing is paid);
 *   - a new id → claimed (pending) and the request goes on; the claim becomes the stored answer once the
 *     payment settled, and is dropped when nothing settled.
 *
 * The buyer's `extensions["payment-identifier"]` is read by the official helper with its `schema` member left
 * out: the helper would compile a buyer-supplied JSON Schema (regexes included) with Ajv.
 *
 * Defends against: a retry paying twice; an id alone (or an id with a made-up signature for a known payer)
 * obtaining an answer; hostile ids reaching the store. Does not defend against: a store that forgot the id
 * (./payment-identifier-store.ts).
 */
import { extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import type { PaymentPayload } from '../wire-schemas.js';
import { bodySha256, paymentFingerprint } from './payment-identifier-fingerprint.js';
import type { PaymentIdentifierStore, PaymentIdKey, StoredAnswer } from './payment-identifier-store.js';
import type { PaidRequest, PaidRequestPort } from './paid-request-port.js';
import type { PaymentMatch } from './payment-terms.js';
import { errorAnswer, type PaywallAnswer } from './paywall-answers.js';

export type IdReading = { kind: 'none' } | { kind: 'id'; id: string } | { kind: 'refused'; answer: PaywallAnswer };

type OfficialPayload = Parameters<typeof extractAndValidatePaymentIdentifier>[0];

/** The payment's id, or the 400 that refuses it. Only `info` of the extension is handed to the helper. */
export function readPaymentIdentifier(payment: PaymentPayload, required: boolean): IdReading {
  const raw = payment.x402Version === 2 ? payment.extensions?.[PAYMENT_IDENTIFIER] : undefined;
  const info =
    raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as { info?: unknown }).info : undefined;
  const probe = { extensions: raw === undefined ? {} : { [PAYMENT_IDENTIFIER]: { info } } } as OfficialPayload;
  const { id, validation } = extractAndValidatePaymentIdentifier(probe);
  if (!validation.valid) return { kind: 'refused', answer: errorAnswer('payment_identifier_invalid') };
  if (id !== null) return { kind: 'id', id };
  if (required) return { kind: 'refused', answer: errorAnswer('payment_identifier_required') };
  return { kind: 'none' };
}

/** A claimed id: completed with the answer after settlement, released otherwise. */
export interface IdClaim {
  store: PaymentIdentifierStore;
  key: PaymentIdKey;
  fingerprint: string;
}

export interface ClaimInput {
  store: PaymentIdentifierStore;
  scope: string;
  id: string;
  req: PaidRequest;
  payment: PaymentPayload;
  match: Extract<PaymentMatch, { kind: 'match' }>;
  pendingTtlSeconds: number;
}

export type ClaimOutcome =
  | { kind: 'claimed'; claim: IdClaim }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'refused'; answer: PaywallAnswer; outcome: 'payment_id_conflict' | 'payment_id_unavailable' };

function targetOf(href: string): string {
  try {
    const url = new URL(href);
    return `${url.pathname}${url.search}`;
  } catch {
    return href;
  }
}

/** Looks the id up and claims it when free; never throws (an unreachable store is a 503). */
export async function claimPaymentIdentifier(input: ClaimInput): Promise<ClaimOutcome> {
  const { store, req, match } = input;
  const key: PaymentIdKey = { scope: input.scope, route: req.path, id: input.id };
  const fingerprint = paymentFingerprint({
    payment: input.payment,
    payer: match.payer,
    method: req.method,
    target: targetOf(req.href),
    accepted: match.facilitatorRequirements,
    bodySha256: req.bodySha256?.() ?? bodySha256(undefined),
  });
  let begun;
  try {
    begun = await store.begin(key, fingerprint, input.pendingTtlSeconds);
  } catch {
    const answer = errorAnswer('payment_identifier_unavailable', {}, { 'Retry-After': '5' });
    return { kind: 'refused', answer, outcome: 'payment_id_unavailable' };
  }
  if (begun.kind === 'new') return { kind: 'claimed', claim: { store, key, fingerprint } };
  if (begun.kind === 'stored') return { kind: 'replay', answer: begun.answer };
  const answer =
    begun.kind === 'in_flight'
      ? errorAnswer('payment_identifier_in_flight', {}, { 'Retry-After': '1' })
      : errorAnswer('payment_identifier_conflict');
  return { kind: 'refused', answer, outcome: 'payment_id_conflict' };
}

/** Writes a stored answer: its body, or (kept without one) 410 with its receipt headers. */
export function replayStoredAnswer(port: PaidRequestPort, answer: StoredAnswer): void {
  if (answer.body_base64 === undefined) {
    const receipt = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => name.includes('response')));
    return port.answer(errorAnswer('payment_identifier_not_replayable', {}, receipt));
  }
  port.replay({ status: answer.status, headers: answer.headers, body: Buffer.from(answer.body_base64, 'base64') });
}

/**
 * The headers of a paid answer worth replaying, lower-cased, most needed first: the stored body is the raw bytes
 * the paid work sent, so what they mean comes first — their type, their encoding (an origin's gzip replayed
 * without `content-encoding` is garbage to the buyer), the range a 206 carries, the target a 3xx names — then how
 * the answer may be cached and which variant it is.
 */
export const REPLAYED_HEADERS = [
  'content-type',
  'content-encoding',
  'content-range',
  'location',
  'cache-control',
  'vary',
  'content-language',
  'etag',
  'last-modified',
] as const;

/**
 * The most headers one stored answer holds, the receipt's included (src/shared/payment-identifier-wire.ts: the
 * platform store refuses more). Past it, the last of `REPLAYED_HEADERS` are not kept.
 */
const MAX_STORED_HEADERS = 8;

/**
 * A value the store takes and a response can carry as sent (the wire rule of src/shared/payment-identifier-wire.ts):
 * at most 4096 characters of printable ASCII, spaces and tabs — never CR, LF or another control character.
 */
function isStorableHeaderValue(value: string | undefined): value is string {
  return typeof value === 'string' && value.length <= 4096 && /^[\x20-\x7e\t]*$/.test(value);
}

/**
 * The answer to keep for a settled payment: its status, the paid work's `REPLAYED_HEADERS` (each only with a
 * storable value; the first that fit beside the receipt), the receipt headers, and the body when it is at most
 * `maxBytes` (undefined `body`: too large or streamed).
 */
export function answerToStore(
  status: number,
  workHeaders: Record<string, string | undefined>,
  receipt: Record<string, string>,
  body: Buffer | undefined,
  maxBytes: number,
): StoredAnswer {
  const headers: Record<string, string> = {};
  let room = MAX_STORED_HEADERS - Object.keys(receipt).length;
  for (const name of REPLAYED_HEADERS) {
    const value = workHeaders[name];
    if (room > 0 && isStorableHeaderValue(value)) {
      headers[name] = value;
      room -= 1;
    }
  }
  for (const [name, value] of Object.entries(receipt)) headers[name.toLowerCase()] = value;
  const keep = body !== undefined && body.length <= maxBytes;
  return { status, headers, ...(keep ? { body_base64: body.toString('base64') } : {}) };
}

/** Completes a claim; a store failure is only logged (the id then frees itself when its pending TTL ends). */
export async function completeClaim(
  claim: IdClaim,
  answer: StoredAnswer,
  warn: (obj: object, msg: string) => void,
): Promise<boolean> {
  try {
    await claim.store.complete(claim.key, claim.fingerprint, answer);
    return true;
  } catch (err) {
    warn(
      { cause: err instanceof Error ? err.name : 'unknown' },
      'x402 middleware: payment-identifier answer not stored',
    );
    return false;
  }
}

/** Drops a claim whose payment did not settle; failures are ignored (the pending TTL frees it). */
export function releaseClaim(claim: IdClaim): void {
  void claim.store.release(claim.key, claim.fingerprint).catch(() => undefined);
}
