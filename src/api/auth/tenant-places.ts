/**
 * A process's places for one kind of shared work, each tenant's share an eighth of them (at least one), tenants
 * served in turn (base/fair-queue.ts): what the signer-call admission (../signing/signer-call-admission.ts) and the
 * chain reads' admission (../chain/chain-read-admission.ts) are built on. A tenant is named as the pay routes name
 * it: a Treasury account (`acct_…`) counts under its agent's owner's platform account (`tenantOf`), so one owner's
 * agents share one share; any other name (a platform account) is its own.
 *
 * Defends: one tenant holding more than its eighth of the places, or more than WAITING_PER_TENANT jobs waiting; a
 * queue over all tenants longer than sixteen times the places. Does not defend: what a refusal answers (each
 * admission names its own codes), nor one person's many accounts (each has a share).
 */
import { FairQueue, type QueueOutcome } from '../../../base/fair-queue.js';

/** One tenant's jobs waiting at most; one more is refused (`tenant_queue_full`). */
export const WAITING_PER_TENANT = 64;

export interface TenantPlacesBounds {
  /** Jobs at work at once from this process (a tenant's an eighth of them, at least one). */
  inFlight: number;
  /** The longest a job waits for its place. */
  waitMs: number;
  /** The tenant a Treasury account counts under (its agent's owner's platform account, else itself); never waits. */
  tenantOf?: (treasuryAccountId: string) => string;
}

export class TenantPlaces {
  /** A tenant's places at most. */
  readonly perTenant: number;
  private readonly queue: FairQueue;

  constructor(private readonly bounds: TenantPlacesBounds) {
    this.perTenant = Math.max(1, Math.ceil(bounds.inFlight / 8));
    this.queue = new FairQueue({
      concurrency: bounds.inFlight,
      perTenantConcurrency: this.perTenant,
      perTenantWaiting: WAITING_PER_TENANT,
      maxWaiting: bounds.inFlight * 16,
      maxWaitMs: bounds.waitMs,
    });
  }

  /** Runs `job` once the tenant `name` counts under has a place, or refuses it unrun; `maxWaitMs` shortens its wait. */
  run<T>(name: string, job: () => Promise<T>, maxWaitMs = this.bounds.waitMs): Promise<QueueOutcome<T>> {
    const tenant = name.startsWith('acct_') && this.bounds.tenantOf ? this.bounds.tenantOf(name) : name;
    return this.queue.run(tenant, job, undefined, maxWaitMs);
  }
}
