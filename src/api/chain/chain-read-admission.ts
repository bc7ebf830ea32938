/**
 * Every read of a chain's RPC that a tenant's call causes waits here for a place among this process's `inFlight`
 * (TREASURY_CHAIN_READS_IN_FLIGHT), a tenant's an eighth of them at most, tenants served in turn
 * (base/fair-queue.ts): a wallet's balance (GET …/balance, and before a key is retired), a reported settlement's
 * transaction (EVM and Solana), an `upto` payment's Permit2 allowance and EIP-2612 nonce, and a seller's ledger
 * row's transaction, EVM or Solana (./balance-reader.ts takes the tenant on each of them; the ledger verifier names
 * the seller's account).
 *
 * Defends: the RPC endpoint, which every tenant shares (and whose provider caps requests at once or a second), filled
 * by one tenant's calls — a flood of settlement reports naming made-up transactions, or of balance reads, made every
 * other tenant's reads fail (`chain_unavailable`) or go stale. Now a tenant has its share of the places and no more,
 * and another tenant's read starts as soon as any place frees. A tenant is named as the pay routes name it: a
 * Treasury account (`acct_…`) counts under its agent's owner's platform account (`tenantOf`). Past 64 of a tenant's
 * reads waiting: 429 `chain_reads_exceeded`; a full queue gives way from its longest backlog first; past it, or after
 * the wait (TREASURY_PAY_QUEUE_WAIT_SECONDS), 503 `chain_busy` — neither read anything. Every refusal counts in
 * `treasury_chain_read_refusals_total{reason}`.
 * Does not defend: one person's many accounts (each has a share), the places of other API processes (each keeps its
 * own: size TREASURY_CHAIN_READS_IN_FLIGHT times the processes below what the RPC takes at once), nor how long a
 * read takes once started (TREASURY_RPC_TIMEOUT_MS). Reads that no tenant's call causes — a payout's resumption (one
 * flush of a seller at a time), a Solana payment's blockhash (shared by every payment) — do not pass here.
 */
import type { QueueRefusal } from '../../../base/fair-queue.js';
import { TenantPlaces, WAITING_PER_TENANT, type TenantPlacesBounds } from '../auth/tenant-places.js';
import type { AppConfig } from '../config/app-config.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';

/** The codes of a read refused here: nothing was read, so a caller must not take them for the RPC's failure. */
const REFUSALS: ReadonlySet<string> = new Set(['chain_reads_exceeded', 'chain_busy']);

/** Whether `err` is this admission's refusal (not the RPC's answer). */
export function isChainReadRefusal(err: unknown): err is AppError {
  return err instanceof AppError && REFUSALS.has(err.code);
}

/** Reads at the RPC at once from this process, the longest a read waits, and whose share a Treasury account takes. */
export type ChainReadBounds = TenantPlacesBounds;

/** What callers of the chain's RPC are given: one read, run once its tenant has a place. */
export interface ChainReads {
  run<T>(tenant: string, read: () => Promise<T>): Promise<T>;
}

export class ChainReadAdmission implements ChainReads {
  private readonly places: TenantPlaces;

  /** This process's admission: TREASURY_CHAIN_READS_IN_FLIGHT places, waits up to TREASURY_PAY_QUEUE_WAIT_SECONDS. */
  static fromConfig(
    config: Pick<AppConfig, 'payAdmission'>,
    metrics: Pick<TreasuryMetrics, 'chainReadRefusals'>,
    tenantOf?: ChainReadBounds['tenantOf'],
  ): ChainReadAdmission {
    const { chainReadsInFlight, queueWaitSeconds } = config.payAdmission;
    const bounds = { inFlight: chainReadsInFlight, waitMs: queueWaitSeconds * 1000 };
    return new ChainReadAdmission(tenantOf ? { ...bounds, tenantOf } : bounds, metrics);
  }

  constructor(
    bounds: ChainReadBounds,
    private readonly metrics: Pick<TreasuryMetrics, 'chainReadRefusals'>,
  ) {
    this.places = new TenantPlaces(bounds);
  }

  /** Runs `read` once `tenant` (a Treasury or platform account id) has a place; throws the refusal otherwise. */
  async run<T>(tenant: string, read: () => Promise<T>): Promise<T> {
    const outcome = await this.places.run(tenant, read);
    if (outcome.ran) return outcome.value;
    this.metrics.chainReadRefusals.inc({ reason: outcome.reason });
    throw this.refusal(outcome.reason);
  }

  private refusal(reason: QueueRefusal): AppError {
    if (reason === 'tenant_queue_full')
      return new AppError('chain_reads_exceeded', {
        fields: { in_flight_max: this.places.perTenant, queue_max: WAITING_PER_TENANT, retry_after_seconds: 1 },
        headers: { 'Retry-After': '1' },
      });
    return new AppError('chain_busy', { headers: { 'Retry-After': '1' } });
  }
}
