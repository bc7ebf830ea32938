/**
 * The pay routes' admission (POST /v1/wallets/{id}/pay and /transfer): a payment is worked on only once it has a
 * place among this process's TREASURY_PAY_IN_FLIGHT, at most TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT of them its
 * tenant's (../auth/wallet-tenant.ts: an owner's sessions, PATs and agents count as one); the others wait in
 * their tenant's queue and freed places go to the waiting tenants in turn (base/fair-queue.ts). Nothing of the
 * payment is read, decided or written before it has its place.
 *
 * Defends: one tenant's flood failing another tenant's payments. The signer's queue is shared by every tenant
 * and answers `busy` when full (503 `signer_unavailable` to whoever's payment it was); a tenant holding more
 * payments in flight than that queue made every other tenant's payments fail. Now one tenant has its share of
 * places and no more; past TREASURY_PAY_QUEUE_PER_ACCOUNT waiting, its next payment is refused at once 429
 * `pay_concurrency_exceeded` (Retry-After 1, `in_flight_max`, `queue_max`); past TREASURY_PAY_QUEUE waiting over
 * all, or after TREASURY_PAY_QUEUE_WAIT_SECONDS of waiting, 503 `pay_overloaded` (Retry-After 1); a payment whose
 * client went away while it waited is dropped (`request_abandoned`: it is never signed for nobody). Every refusal
 * is counted by reason (`treasury_pay_admission_refusals_total`); the waiting are `treasury_pay_admission_waiting`.
 * Does not defend: one person's many accounts (each has its share; sign-ins are bounded per client address), the
 * places of other API processes (each keeps its own: size TREASURY_PAY_IN_FLIGHT times the processes below the
 * signer's queue, docs/operations.md), nor a payment's own time once admitted (the signer's and the database's).
 */
import type { ServerResponse } from 'node:http';
import { FairQueue, type QueueRefusal, type WhenAbandoned } from '../../../base/fair-queue.js';
import type { PayAdmissionConfig } from '../config/pay-admission-config.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';

export class PayAdmission {
  private readonly queue: FairQueue;

  constructor(
    private readonly config: PayAdmissionConfig['payAdmission'],
    private readonly metrics: Pick<TreasuryMetrics, 'payAdmissionRefusals' | 'payAdmissionWaitingSource'>,
  ) {
    this.queue = new FairQueue({
      concurrency: config.inFlight,
      perTenantConcurrency: config.inFlightPerAccount,
      perTenantWaiting: config.queuePerAccount,
      maxWaiting: config.queue,
      maxWaitMs: config.queueWaitSeconds * 1000,
    });
    metrics.payAdmissionWaitingSource.read = () => this.queue.size;
  }

  /**
   * Runs `payment` once `tenant` has a place; `response` is the request's, whose closing while the payment waits
   * drops it. Throws the refusal's AppError if it never got one.
   */
  async run<T>(tenant: string, response: ServerResponse, payment: () => Promise<T>): Promise<T> {
    const outcome = await this.queue.run(tenant, payment, whenClosed(response));
    if (outcome.ran) return outcome.value;
    this.metrics.payAdmissionRefusals.inc({ reason: outcome.reason });
    throw this.refusal(outcome.reason);
  }

  private refusal(reason: QueueRefusal): AppError {
    switch (reason) {
      case 'tenant_queue_full':
        return new AppError('pay_concurrency_exceeded', {
          fields: {
            in_flight_max: this.config.inFlightPerAccount,
            queue_max: this.config.queuePerAccount,
            retry_after_seconds: 1,
          },
          headers: { 'Retry-After': '1' },
        });
      case 'abandoned':
        return new AppError('request_abandoned');
      case 'queue_full':
      case 'waited_too_long':
        return new AppError('pay_overloaded', { fields: { reason }, headers: { 'Retry-After': '1' } });
    }
  }
}

/** Drops a waiting payment when its response closes before it was written (the client went away). */
function whenClosed(response: ServerResponse): WhenAbandoned {
  return (drop) => {
    if (response.destroyed || response.socket?.destroyed) {
      drop();
      return () => {};
    }
    response.once('close', drop);
    return () => response.off('close', drop);
  };
}
