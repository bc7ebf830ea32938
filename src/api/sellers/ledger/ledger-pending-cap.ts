/**
 * How many ledger rows one seller, and one account over all its sellers, may have waiting for on-chain verification
 * (TREASURY_LEDGER_MAX_PENDING_PER_SELLER, 10,000 by default; TREASURY_LEDGER_MAX_PENDING_PER_ACCOUNT, 20,000). Every
 * report route asks `admit` before it stores anything: a single row or a whole batch (each row with its seller) is
 * admitted when, for each seller, its pending rows plus the report's new transactions (those it has not reported
 * before) stay within the seller cap, and for each account, its sellers' pending rows plus all their new ones stay
 * within the account cap; otherwise the whole report is refused — 429 `ledger_pending_limit` (`scope` `seller` or
 * `account`) with `Retry-After`, nothing stored — so a batch is never stored in part. A report of transactions
 * already stored (a retry) adds nothing and is always admitted. A seller whose rows created in the last 24 hours
 * include TREASURY_LEDGER_MAX_REJECTED_PER_SELLER (20,000 by default) rejected ones has spent its rejected budget:
 * its reports of new transactions are refused whole too — 429 `ledger_rejected_budget_exhausted` (`seller_id`,
 * `limit`, `window_seconds`) with `Retry-After` — until rows age out of the window.
 *
 * Defends: a seller reporting made-up transactions by the thousand to fill the verifier's queue and multiply its
 * RPC calls (the verifier also serves accounts, and their sellers, in turns: ../store/ledger-fair-claim.ts), or,
 * once they end rejected (after TREASURY_LEDGER_NOT_FOUND_GRACE_SECONDS) and stop counting as pending, to fill the
 * shared disk with rows kept forever (about a million a day at the pending cap, unbounded otherwise); an
 * account multiplying that by its sellers (up to TREASURY_MAX_SELLERS_PER_ACCOUNT of them: the account cap is
 * shared). Counting reads the pending rows on their own index (migration 20261128150000), the seller's and the
 * account's sellers' (joined by sellers.account_id, on the (account_id, created_at, id) index), at most cap + 1 of them;
 * the rejected rows of the window on the unverified rows' partial index (migration 20261125200400), at most the
 * budget of them (and the window's pending rows, within their cap).
 * Does not defend: reports of one seller or account arriving at the same moment, which are counted without a lock
 * (a lock would hold a pooled connection per waiting report): a cap can be passed by the rows of the reports in
 * flight together, at most 100 per request. Rows parked for a reason the seller can fix (no proven pay-to) count
 * too. The rejected budget bounds the rows a seller adds per day (about the budget plus the pending cap), not what
 * it keeps: rejected rows are kept TREASURY_LEDGER_REJECTED_RETENTION_DAYS, then deleted
 * (./rejected-ledger-sweeper.ts). The same caps bound the other way rows become pending: proving a
 * pay-to reopens rows rejected for paying an address not proven yet only as far as both caps leave room
 * (../seller-pay-to-service.ts).
 */
import { ledgerTxKey, type LedgerReportBody } from '../../../shared/ledger-report-schema.js';
import { AppError } from '../../errors/app-error.js';
import type { SellerRow } from '../seller-views.js';
import type { PendingRowCounts } from '../store/ledger-stores.js';

export const DEFAULT_MAX_PENDING_PER_SELLER = 10_000;
export const DEFAULT_MAX_PENDING_PER_ACCOUNT = 20_000;
export const DEFAULT_MAX_REJECTED_PER_SELLER = 20_000;
/** The window the rejected rows are counted over: the last 24 hours (by the database's clock). */
export const REJECTED_WINDOW_SECONDS = 86_400;
/** The retry hint of a spent rejected budget: rows leave the 24 h window as they age, an hour's worth at a time. */
const REJECTED_RETRY_AFTER_SECONDS = 3_600;
/** The retry hint of a refusal: rows leave `pending` as the verifier decides them, within a minute or two. */
const RETRY_AFTER_SECONDS = 60;

export interface ReportedRow {
  seller: Pick<SellerRow, 'id' | 'account_id'>;
  row: Pick<LedgerReportBody, 'tx_hash' | 'network'>;
}

export class LedgerPendingCap {
  constructor(
    private readonly counts: PendingRowCounts,
    /** The most pending rows a seller may have; proving a pay-to reopens rows within it too (../seller-pay-to-service.ts). */
    readonly maxPending = DEFAULT_MAX_PENDING_PER_SELLER,
    /** The most pending rows of all of an account's sellers together; likewise. */
    readonly maxPendingPerAccount = DEFAULT_MAX_PENDING_PER_ACCOUNT,
    /** The most rows of a seller created in the last 24 h that may end rejected before its new reports are refused. */
    readonly maxRejectedPerSeller = DEFAULT_MAX_REJECTED_PER_SELLER,
  ) {}

  /**
   * Resolves when every seller and account of `rows` has room for its new rows; throws `ledger_rejected_budget_exhausted`
   * or `ledger_pending_limit` otherwise.
   */
  async admit(rows: readonly ReportedRow[]): Promise<void> {
    const bySeller = new Map<string, { accountId: string; hashes: Set<string> }>();
    for (const { seller, row } of rows) {
      const entry = bySeller.get(seller.id) ?? { accountId: seller.account_id, hashes: new Set<string>() };
      entry.hashes.add(ledgerTxKey(row));
      bySeller.set(seller.id, entry);
    }
    const freshByAccount = new Map<string, number>();
    for (const [sellerId, { accountId, hashes }] of bySeller) {
      const fresh = hashes.size - (await this.storedCount(sellerId, [...hashes]));
      if (fresh === 0) continue;
      const rejected = await this.counts.rejectedRecently(sellerId, REJECTED_WINDOW_SECONDS, this.maxRejectedPerSeller);
      if (rejected >= this.maxRejectedPerSeller) throw this.rejectedRefusal(sellerId);
      const pending = await this.counts.pending(sellerId, this.maxPending + 1);
      if (pending + fresh > this.maxPending) throw this.refusal('seller', this.maxPending, pending);
      freshByAccount.set(accountId, (freshByAccount.get(accountId) ?? 0) + fresh);
    }
    for (const [accountId, fresh] of freshByAccount) {
      const pending = await this.counts.pendingOfAccount(accountId, this.maxPendingPerAccount + 1);
      if (pending + fresh > this.maxPendingPerAccount)
        throw this.refusal('account', this.maxPendingPerAccount, pending);
    }
  }

  /** How many of `hashes` the seller has already reported (UNIQUE (seller_id, tx_hash)). */
  private storedCount(sellerId: string, hashes: string[]): Promise<number> {
    return this.counts.reported(sellerId, hashes);
  }

  private rejectedRefusal(sellerId: string): AppError {
    return new AppError('ledger_rejected_budget_exhausted', {
      headers: { 'Retry-After': String(REJECTED_RETRY_AFTER_SECONDS) },
      recovery: { kind: 'retry_later', retry_after_seconds: REJECTED_RETRY_AFTER_SECONDS },
      fields: {
        seller_id: sellerId,
        limit: this.maxRejectedPerSeller,
        window_seconds: REJECTED_WINDOW_SECONDS,
        retry_after_seconds: REJECTED_RETRY_AFTER_SECONDS,
      },
    });
  }

  private refusal(scope: 'seller' | 'account', max: number, pending: number): AppError {
    return new AppError('ledger_pending_limit', {
      headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      recovery: { kind: 'retry_later', retry_after_seconds: RETRY_AFTER_SECONDS },
      fields: {
        scope,
        max_pending_rows: max,
        pending_rows: Math.min(pending, max),
        retry_after_seconds: RETRY_AFTER_SECONDS,
      },
    });
  }
}
