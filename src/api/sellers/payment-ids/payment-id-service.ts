/**
 * The platform's side of the x402 `payment-identifier` store (docs/api.md#payment-identifier-store): a seller's
 * paywall (its middleware with the seller's service PAT, or the gate for a managed seller) claims an id before
 * verify, completes it with the answer after settlement, or releases it. Answers are kept
 * `PAYMENT_ID_RETENTION_SECONDS` (24 h); expired rows are swept in the background (./payment-id-sweeper.ts) and
 * by a write that meets a budget. Rows: ../store/pg-payment-id-store.ts; routes: ./payment-id-routes.ts.
 *
 * Each seller has two budgets (TREASURY_MAX_PAYMENT_IDS_PER_SELLER, TREASURY_MAX_PAYMENT_ID_BYTES_PER_SELLER):
 * - ids kept: a claim of a new id past it is refused, 429 `payment_id_limit_reached` (scope `ids`). The paywall
 *   takes any refusal of `begin` as the store being unavailable: 503 to the buyer, nothing verified or paid.
 * - bytes of stored answers: an answer that does not fit is kept without its body (what the paywall does itself
 *   with a body too large to keep: a retry gets 410 with its receipt headers), and when even that does not fit it
 *   is refused, 429 `payment_id_limit_reached` (scope `answer_bytes`). The paywall only logs a refused `complete`:
 *   the buyer already paid and gets its answer; the claim stays pending until its TTL, so retries see 409 in
 *   flight and a second payment under the id is refused meanwhile — never worse than no store at all.
 *
 * Defends against: a tenant reading or writing another seller's ids (the seller comes from the bearer, never
 * from the body, except the gate's endpoint_id, checked against the gate's account); rows living forever; one
 * seller (a self-made account looping claims and 350 KB answers) filling the shared database.
 * Does not defend against: a seller's paywall storing a false answer for its own ids (it only harms its buyers'
 * retries, which it answers anyway); an account's many sellers, each with its own budgets.
 */
import type {
  PaymentIdBeginBody,
  PaymentIdBeginReply,
  PaymentIdCompleteBody,
  PaymentIdReleaseBody,
  StoredAnswer,
} from '../../../shared/payment-identifier-wire.js';
import { AppError } from '../../errors/app-error.js';
import type { PaymentIdBudgetFull, PgPaymentIdStore } from '../store/pg-payment-id-store.js';

export const PAYMENT_ID_RETENTION_SECONDS = 86_400;

export interface PaymentIdBounds {
  /** Rows one seller may hold (pending claims and stored answers, expired ones until swept). */
  maxIdsPerSeller: number;
  /** Bytes of stored answers (their JSON text) one seller may hold. */
  maxAnswerBytesPerSeller: number;
}

export interface PaymentIdServiceDeps {
  store: PgPaymentIdStore;
  clock: () => Date;
  bounds: PaymentIdBounds;
}

export class PaymentIdService {
  constructor(private readonly deps: PaymentIdServiceDeps) {}

  private key(sellerId: string, body: PaymentIdReleaseBody) {
    return { sellerId, route: body.route, id: body.id, fingerprint: body.fingerprint };
  }

  async begin(sellerId: string, body: PaymentIdBeginBody): Promise<PaymentIdBeginReply> {
    const now = this.deps.clock();
    const until = new Date(now.getTime() + body.pending_ttl_seconds * 1000);
    const got = await this.deps.store.begin(this.key(sellerId, body), now, until, this.deps.bounds.maxIdsPerSeller);
    if (got.kind === 'full') throw limitReached('ids', this.deps.bounds.maxIdsPerSeller, got.totals.ids, got, now);
    return got.reply;
  }

  async complete(sellerId: string, body: PaymentIdCompleteBody): Promise<{ done: boolean }> {
    const now = this.deps.clock();
    const until = new Date(now.getTime() + PAYMENT_ID_RETENTION_SECONDS * 1000);
    const max = this.deps.bounds.maxAnswerBytesPerSeller;
    const answers = { whole: body.answer, lean: withoutBody(body.answer) };
    const got = await this.deps.store.complete(this.key(sellerId, body), answers, now, until, max);
    if (got.kind === 'full') throw limitReached('answer_bytes', max, got.totals.answerBytes, got, now);
    return { done: got.kind === 'kept' };
  }

  async release(sellerId: string, body: PaymentIdReleaseBody): Promise<{ done: boolean }> {
    return { done: await this.deps.store.release(this.key(sellerId, body)) };
  }
}

/** The answer without its body, when it has one (a retry of it gets 410 with the receipt headers). */
function withoutBody(answer: StoredAnswer): StoredAnswer | undefined {
  if (answer.body_base64 === undefined) return undefined;
  const { body_base64: _body, ...lean } = answer;
  return lean;
}

/** 429 `payment_id_limit_reached`; retry once the seller's next row expires (1 s to 24 h; 60 s when none). */
function limitReached(
  scope: 'ids' | 'answer_bytes',
  limit: number,
  stored: number,
  full: PaymentIdBudgetFull,
  now: Date,
): AppError {
  const wait = full.nextExpiry ? Math.ceil((full.nextExpiry.getTime() - now.getTime()) / 1000) : 60;
  const retryAfter = Math.min(Math.max(wait, 1), PAYMENT_ID_RETENTION_SECONDS);
  return new AppError('payment_id_limit_reached', {
    headers: { 'Retry-After': String(retryAfter) },
    recovery: { kind: 'retry_later', retry_after_seconds: retryAfter },
    fields: { scope, limit, stored, retry_after_seconds: retryAfter },
  });
}
