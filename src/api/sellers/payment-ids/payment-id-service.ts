/**
 * The platform's side of the x402 `payment-identifier` store (docs/api.md#payment-identifier-store): a seller's
 * paywall (its middleware with the seller's service PAT, or the gate for a managed seller) claims an id before
 * verify, completes it with the answer after settlement, or releases it. Answers are kept
 * `PAYMENT_ID_RETENTION_SECONDS` (24 h); every completion also sweeps a small batch of the seller's expired rows.
 * Rows: ../store/pg-payment-id-store.ts; routes: ./payment-id-routes.ts.
 *
 * Defends against: a tenant reading or writing another seller's ids (the seller comes from the bearer, never
 * from the body, except the gate's endpoint_id, checked against the gate's account); rows living forever.
 * Does not defend against: a seller's paywall storing a false answer for its own ids (it only harms its buyers'
 * retries, which it answers anyway).
 */
import type {
  PaymentIdBeginBody,
  PaymentIdBeginReply,
  PaymentIdCompleteBody,
  PaymentIdReleaseBody,
} from '../../../shared/payment-identifier-wire.js';
import type { PgPaymentIdStore } from '../store/pg-payment-id-store.js';

export const PAYMENT_ID_RETENTION_SECONDS = 86_400;
const SWEEP_BATCH = 100;

export class PaymentIdService {
  constructor(private readonly deps: { store: PgPaymentIdStore; clock: () => Date }) {}

  private key(sellerId: string, body: PaymentIdReleaseBody) {
    return { sellerId, route: body.route, id: body.id, fingerprint: body.fingerprint };
  }

  begin(sellerId: string, body: PaymentIdBeginBody): Promise<PaymentIdBeginReply> {
    const now = this.deps.clock();
    const until = new Date(now.getTime() + body.pending_ttl_seconds * 1000);
    return this.deps.store.begin(this.key(sellerId, body), now, until);
  }

  async complete(sellerId: string, body: PaymentIdCompleteBody): Promise<{ done: boolean }> {
    const now = this.deps.clock();
    const until = new Date(now.getTime() + PAYMENT_ID_RETENTION_SECONDS * 1000);
    const done = await this.deps.store.complete(this.key(sellerId, body), body.answer, until);
    await this.deps.store.sweep(sellerId, now, SWEEP_BATCH);
    return { done };
  }

  async release(sellerId: string, body: PaymentIdReleaseBody): Promise<{ done: boolean }> {
    return { done: await this.deps.store.release(this.key(sellerId, body)) };
  }
}
