/**
 * One logical purchase across attempts: the x402 `payment-identifier` made when the purchase starts
 * (`generatePaymentId()`, `pay_` + 32 hex) and the payment it signed, kept in a purchase store
 * (purchase-store.ts) under the caller's purchase key so that every retry of the purchase — the SDK's own, the
 * caller's, a new process after a crash — carries the same identifier and sends the same signed payment. A
 * Treasury wallet keys the signature by the identifier (the same identifier never signs twice on a wallet);
 * a local key's payment is sent again from the store, never signed again.
 *
 * The record's life: opened (identifier only) before anything is signed; the signed payment written before it
 * is sent, with the time after which it can no longer settle (EIP-3009 `validBefore`, the Permit2 `deadline` —
 * never the seller's longer `maxTimeoutSeconds` — and for Solana SOLANA_PAYLOAD_LIFETIME_MS, a blockhash's
 * life: the exact shape has no durable nonce); deleted once the seller took it (2xx, or settled-then-refused).
 * A record past its time is forgotten: nothing it holds can settle any more, so a new purchase cannot pay twice
 * for it. An identifier never signed is forgotten after UNSIGNED_PURCHASE_TTL_MS — or at once when this
 * attempt opened it and was refused before anything was signed (forgetRefusedPurchase: over budget, no
 * payable entry, Treasury's 4xx refusal), so a seller cannot fill the store with purchases that paid nothing.
 * Each record names the origin it pays: a store holds at most MAX_LIVE_PURCHASES_PER_ORIGIN live ones per origin
 * (purchase-origin-bound.ts), so a seller that never takes its signed payments cannot fill the store either — a
 * new purchase there is PurchaseOriginLimitError when it is opened, before anything is signed.
 *
 * Each record is tied to its request: the SHA-256 of the method and URL (`requestHash`). A purchase key or
 * identifier naming a live purchase of another request is PurchaseRequestMismatchError before anything is sent;
 * a record kept before the binding existed (no `requestHash`) is resumed on no request (it cannot say which),
 * and is forgotten when it expires.
 *
 * Defends against: a retry paying again for a payment whose answer was lost (timeout, crash, dropped
 * connection); a resumed purchase paying other terms than it signed (PurchaseTermsChangedError, nothing new
 * signed); a purchase's signed payment sent to another URL that copied its seller's 402 (an identifier chosen
 * by someone else — a model's tool call — names a purchase of another URL: PurchaseRequestMismatchError); a
 * payment sent that its store does not hold (written first; a failed write sends nothing).
 * Does not defend against: a caller that starts a new purchase (new key) for the same thing while the old
 * payment may still settle, or a seller that settles the same payment twice; an identifier whose record the
 * store no longer holds (a restarted process's memory store) reused on another URL: for a Treasury wallet,
 * Treasury answers the identifier with what it signed for the same terms.
 */
import { generatePaymentId } from '@x402/extensions/payment-identifier';
import { sha256, stringToBytes } from 'viem';
import type { PaymentRequired } from '../x402/wire-schemas.js';
import type { SignOutcome } from './buyer-payer.js';
import {
  PurchaseOriginLimitError,
  PurchaseRequestMismatchError,
  PurchaseStoreError,
  PurchaseTermsChangedError,
  SolanaClusterMismatchError,
  SolanaRpcUnreachableError,
} from './purchase-errors.js';
import type { PurchaseStore, StoredPurchase, StoredSigned } from './purchase-store.js';
import {
  InsufficientBudgetError,
  InvalidArgumentError,
  NoCompatibleAcceptError,
  TreasuryApiError,
} from './sdk-errors.js';
import { isSvmTerms, type SignedTerms } from './signed-terms.js';

/** How long an identifier that signed nothing is kept: a crash before signing resumes within it. */
export const UNSIGNED_PURCHASE_TTL_MS = 10 * 60_000;
/** The least a Solana payment is kept: its blockhash stays valid for about 150 slots. */
export const SOLANA_PAYLOAD_LIFETIME_MS = 150_000;

/** What names a purchase on one request: the caller's key and/or identifier, both optional. */
export interface PurchaseRequest {
  purchaseKey?: string | undefined;
  paymentId?: string | undefined;
}

export interface OpenPurchase {
  key: string;
  paymentId: string;
  record: StoredPurchase;
  /** False for a purchase the caller named neither by key nor by id: nobody can resume it, so it is not stored. */
  stored: boolean;
  /** True when this attempt made the record (none was alive under its key). */
  fresh: boolean;
}

/** A store call whose failure is a PurchaseStoreError, or the store's PurchaseOriginLimitError (nothing new signed or sent). */
async function storeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof PurchaseStoreError || err instanceof PurchaseOriginLimitError) throw err;
    throw new PurchaseStoreError(`could not ${what}`, err);
  }
}

/** What a purchase is tied to: the SHA-256 (hex) of its request's method (upper-cased) and absolute URL. */
export function purchaseRequestHash(method: string, url: string): string {
  return sha256(stringToBytes(JSON.stringify([method.toUpperCase(), url]))).slice(2);
}

/** A live record resumed on `requestHash` only; a record without one (kept before) on none. */
function assertSameRequest(record: StoredPurchase, requestHash: string): void {
  if (record.requestHash !== requestHash)
    throw new PurchaseRequestMismatchError(record.paymentId, record.requestHash === undefined);
}

/** The caller's purchase key, else its identifier; undefined when it names neither. */
const keyOf = (request: PurchaseRequest): string | undefined => request.purchaseKey ?? request.paymentId;

/**
 * Before the request is sent at all: a live purchase the request names that was made for another request is
 * PurchaseRequestMismatchError (nothing reaches that URL). openPurchase checks it again.
 */
export async function checkPurchaseRequest(
  store: PurchaseStore,
  request: PurchaseRequest,
  requestHash: string,
  now: number,
): Promise<void> {
  const key = keyOf(request);
  if (key === undefined) return;
  const record = await storeCall('read a purchase', () => store.get(key));
  if (record && record.expiresAt > now) assertSameRequest(record, requestHash);
}

/**
 * The purchase of a request: its stored record when one is alive and was made for this request (`requestHash`,
 * purchaseRequestHash; another request's is PurchaseRequestMismatchError), else a new one (the caller's
 * identifier, or a new one) tied to it and to the origin of `paidUrl` (where its payment goes), stored before
 * anything is signed (a store at its bound for that origin: PurchaseOriginLimitError). Key: the caller's purchase
 * key, else the identifier. A request naming neither is a purchase of its own, kept in memory for this call only.
 */
export async function openPurchase(
  store: PurchaseStore,
  request: PurchaseRequest,
  { requestHash, paidUrl }: { requestHash: string; paidUrl: string },
  now: number,
): Promise<OpenPurchase> {
  const key = keyOf(request);
  const { origin } = new URL(paidUrl);
  if (key === undefined) {
    const paymentId = generatePaymentId();
    const record = { paymentId, createdAt: now, expiresAt: now + UNSIGNED_PURCHASE_TTL_MS, requestHash, origin };
    return { key: paymentId, paymentId, record, stored: false, fresh: true };
  }
  let record = await storeCall('read a purchase', () => store.get(key));
  if (record && record.expiresAt <= now) {
    await storeCall('forget an expired purchase', () => store.delete(key));
    record = undefined;
  }
  if (record) assertSameRequest(record, requestHash);
  if (record && request.paymentId !== undefined && record.paymentId !== request.paymentId)
    throw new InvalidArgumentError('init.paymentId', `the purchase key holds payment id ${record.paymentId}`);
  const fresh = !record;
  if (!record) {
    record = {
      paymentId: request.paymentId ?? generatePaymentId(),
      createdAt: now,
      expiresAt: now + UNSIGNED_PURCHASE_TTL_MS,
      requestHash,
      origin,
    };
    const made = record;
    await storeCall('store a purchase', () => store.put(key, made));
  }
  return { key, paymentId: record.paymentId, record, stored: true, fresh };
}

const sortedJson = (v: unknown): string =>
  JSON.stringify(v, (_k, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : value,
  );

/**
 * The signed payment of a resumed purchase, to send again: when the seller still offers its entry (the same
 * entry, field for field). Another entry only → PurchaseTermsChangedError. Nothing signed yet → undefined.
 */
export function resumeSigned(purchase: OpenPurchase, challenge: PaymentRequired): StoredSigned | undefined {
  const signed = purchase.record.signed;
  if (!signed) return undefined;
  const wanted = sortedJson(signed.requirements);
  if (!challenge.accepts.some((a) => sortedJson(a) === wanted)) throw new PurchaseTermsChangedError(purchase.paymentId);
  return signed;
}

/** The outcome a stored payment stands for (the result reads it as it read the first). */
export function storedOutcome(signed: StoredSigned): SignOutcome {
  return {
    terms: signed.terms as unknown as SignedTerms,
    ...(signed.payment ? { payment: signed.payment } : {}),
    ...(signed.payer !== undefined ? { payer: signed.payer } : {}),
  };
}

/**
 * When the signed terms can no longer settle, unix ms: the authorization's `validBefore` (the Permit2
 * `deadline`) as signed, whatever the seller's `maxTimeoutSeconds` says; a Solana transaction's blockhash life;
 * the seller's time-out only when the signed time cannot be read.
 */
export function signedExpiry(terms: SignedTerms, maxTimeoutSeconds: number, now: number): number {
  if (isSvmTerms(terms)) return now + SOLANA_PAYLOAD_LIFETIME_MS;
  const seconds = Number(
    terms.scheme === 'upto' ? terms.permit2_authorization.deadline : terms.authorization.validBefore,
  );
  return Number.isSafeInteger(seconds) && seconds > 0 ? seconds * 1000 : now + maxTimeoutSeconds * 1000;
}

/** Keeps the signed payment before it is sent (a failed write: PurchaseStoreError, nothing sent). */
export async function rememberSigned(
  store: PurchaseStore,
  purchase: OpenPurchase,
  outcome: SignOutcome,
  requirements: StoredSigned['requirements'],
  paymentHeader: string,
  now: number,
): Promise<void> {
  if (!purchase.stored) return;
  const record: StoredPurchase = {
    ...purchase.record,
    expiresAt: signedExpiry(outcome.terms, requirements.maxTimeoutSeconds, now),
    signed: {
      requirements,
      paymentHeader,
      terms: outcome.terms as unknown as Record<string, unknown>,
      ...(outcome.payment ? { payment: outcome.payment } : {}),
      ...(outcome.payer !== undefined ? { payer: outcome.payer } : {}),
    },
  };
  await storeCall('store a signed payment', () => store.put(purchase.key, record));
}

/**
 * Whether `err` says nothing was signed for the purchase: refused by the buyer before signing (budget, no
 * payable entry, the Solana RPC's cluster) or by Treasury with a 4xx answer other than 409 (a 409 may be the
 * same identifier still being signed). Anything else — a lost answer, a 5xx, a signature withheld — may have
 * signed, and keeps the record.
 */
function refusedBeforeSigning(err: unknown): boolean {
  if (
    err instanceof InsufficientBudgetError ||
    err instanceof NoCompatibleAcceptError ||
    err instanceof SolanaClusterMismatchError ||
    err instanceof SolanaRpcUnreachableError
  )
    return true;
  const api = err instanceof TreasuryApiError ? err : (err as { apiError?: unknown } | null)?.apiError;
  return api instanceof TreasuryApiError && api.status >= 400 && api.status < 500 && api.status !== 409;
}

/**
 * A purchase this attempt opened, refused before anything was signed (`err`): forgotten at once, so that
 * refused purchases do not fill the store (nothing it held can be paid). A resumed or signed record stays.
 * A store that fails to forget does not hide `err`: the record goes when it expires.
 */
export async function forgetRefusedPurchase(store: PurchaseStore, purchase: OpenPurchase, err: unknown): Promise<void> {
  if (purchase.stored && purchase.fresh && !purchase.record.signed && refusedBeforeSigning(err))
    await store.delete(purchase.key).catch(() => undefined);
}

/**
 * The purchase is over (the seller took its payment): forgets it. A store that fails to forget does not
 * fail the payment that was made: the record goes when it expires.
 */
export async function closePurchase(store: PurchaseStore, purchase: OpenPurchase): Promise<void> {
  if (purchase.stored) await store.delete(purchase.key).catch(() => undefined);
}
