/**
 * How many ledger rows one seller may have waiting for on-chain verification (TREASURY_LEDGER_MAX_PENDING_PER_SELLER,
 * 10,000 by default). Every report route asks `admit` before it stores anything: a single row or a whole batch
 * (each row with its seller) is admitted when, for each seller, its pending rows plus the report's new transactions
 * (those it has not reported before) stay within the cap; otherwise the whole report is refused — 429
 * `ledger_pending_limit` with `Retry-After`, nothing stored — so a batch is never stored in part. A report of
 * transactions already stored (a retry) adds nothing and is always admitted.
 *
 * Defends: a seller reporting made-up transactions by the thousand to fill the verifier's queue and multiply its
 * RPC calls (the verifier also serves sellers in turns, ./ledger-fair-claim.ts). Counting reads the seller's
 * pending rows on their own index (migration 20261128150000), at most cap + 1 of them.
 * Does not defend: reports of one seller arriving at the same moment, which are counted without a lock (a lock
 * would hold a pooled connection per waiting report): the cap can be passed by the rows of the reports in flight
 * together, at most 100 per request. Rows parked for a reason the seller can fix (no proven pay-to) count too.
 * The same cap bounds the other way rows become pending: proving a pay-to reopens rows rejected for paying an
 * address not proven yet only as far as `maxPending` leaves room (../seller-pay-to-service.ts).
 */
import { ledgerTxKey, type LedgerReportBody } from '../../../shared/ledger-report-schema.js';
import { AppError } from '../../errors/app-error.js';
import type { SellerRow } from '../seller-views.js';
import type { PendingRowCounts } from '../store/ledger-stores.js';

export const DEFAULT_MAX_PENDING_PER_SELLER = 10_000;
/** The retry hint of a refusal: rows leave `pending` as the verifier decides them, within a minute or two. */
const RETRY_AFTER_SECONDS = 60;

export interface ReportedRow {
  seller: Pick<SellerRow, 'id'>;
  row: Pick<LedgerReportBody, 'tx_hash' | 'network'>;
}

export class LedgerPendingCap {
  constructor(
    private readonly counts: PendingRowCounts,
    /** The most pending rows a seller may have; proving a pay-to reopens rows within it too (../seller-pay-to-service.ts). */
    readonly maxPending = DEFAULT_MAX_PENDING_PER_SELLER,
  ) {}

  /** Resolves when every seller of `rows` has room for its new rows; throws `ledger_pending_limit` otherwise. */
  async admit(rows: readonly ReportedRow[]): Promise<void> {
    const bySeller = new Map<string, Set<string>>();
    for (const { seller, row } of rows) {
      const hashes = bySeller.get(seller.id) ?? new Set<string>();
      bySeller.set(seller.id, hashes.add(ledgerTxKey(row)));
    }
    for (const [sellerId, hashes] of bySeller) {
      const fresh = hashes.size - (await this.storedCount(sellerId, [...hashes]));
      if (fresh === 0) continue;
      const pending = await this.pendingCount(sellerId);
      if (pending + fresh > this.maxPending) throw this.refusal(pending);
    }
  }

  /** How many of `hashes` the seller has already reported (UNIQUE (seller_id, tx_hash)). */
  private storedCount(sellerId: string, hashes: string[]): Promise<number> {
    return this.counts.reported(sellerId, hashes);
  }

  /** The seller's pending rows, counted up to the cap + 1 (a seller far above it costs no more). */
  private pendingCount(sellerId: string): Promise<number> {
    return this.counts.pending(sellerId, this.maxPending + 1);
  }

  private refusal(pending: number): AppError {
    return new AppError('ledger_pending_limit', {
      headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      recovery: { kind: 'retry_later', retry_after_seconds: RETRY_AFTER_SECONDS },
      fields: {
        max_pending_rows: this.maxPending,
        pending_rows: Math.min(pending, this.maxPending),
        retry_after_seconds: RETRY_AFTER_SECONDS,
      },
    });
  }
}
