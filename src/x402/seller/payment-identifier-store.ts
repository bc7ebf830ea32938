/**
 * What the `payment-identifier` rule (./payment-identifier-rule.ts) needs of a store, and the stored answer's
 * one shape (a zod schema: the platform's routes and client parse the same one). Implementations: in memory
 * (./payment-identifier-memory-store.ts, the middleware's default) and through the platform
 * (./payment-identifier-platform-store.ts, PostgreSQL; the gate's default, the middleware's on request).
 *
 * A key is (scope, route, id): scope names the seller, route the path the id was used on. An entry is first
 * `pending` (the first request with the id is in flight; it holds the request's fingerprint), then either
 * completed with the answer of a settled payment or dropped (nothing settled: the id is free again).
 *
 * Defends against: two requests with one id both paying (the first `begin` wins, the second sees
 * `in_flight` or `conflict`); an answer served to another request (a `stored` answer is handed out only for
 * the same fingerprint). Does not defend against: a store that forgets (eviction, retention, a restart of the
 * in-memory one) — then a retry is a new request, and the payment's on-chain nonce refuses a resent payload.
 */
import type { StoredAnswer } from '../../shared/payment-identifier-wire.js';

export {
  MAX_STORED_ANSWER_BYTES,
  storedAnswerSchema,
  type StoredAnswer,
} from '../../shared/payment-identifier-wire.js';

export interface PaymentIdKey {
  /** The seller the id belongs to. */
  scope: string;
  /** The path the id was used on. */
  route: string;
  /** The buyer's id: 16–128 characters of [A-Za-z0-9_-]. */
  id: string;
}

export type BeginOutcome =
  /** The id was free: it is now pending with this fingerprint; the caller must `complete` or `release` it. */
  | { kind: 'new' }
  /** The same request is in flight. */
  | { kind: 'in_flight' }
  /** The id is held by another fingerprint (another payment, payer or request). */
  | { kind: 'conflict' }
  /** The same request was answered: replay it. */
  | { kind: 'stored'; answer: StoredAnswer };

export interface PaymentIdentifierStore {
  /** Claims the key for `fingerprint`, or says who holds it. `pendingTtlSeconds`: how long a claim may live. */
  begin(key: PaymentIdKey, fingerprint: string, pendingTtlSeconds: number): Promise<BeginOutcome>;
  /** The claim's payment settled: keep `answer` for the retention window. */
  complete(key: PaymentIdKey, fingerprint: string, answer: StoredAnswer): Promise<void>;
  /** Nothing settled: the claim is dropped (only if it is still this fingerprint's pending claim). */
  release(key: PaymentIdKey, fingerprint: string): Promise<void>;
}
