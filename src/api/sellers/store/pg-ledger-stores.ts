/**
 * The PostgreSQL implementations of the seller's money stores (./ledger-stores.ts): every query they stand for,
 * each naming the seller. Revenue between a range's whole days reads the per-day rollups the triggers keep
 * (seller_revenue_days, docs/adr/0008; unverified rows: seller_unverified_days, migration 20261202120000), and the
 * rows at a range's edges, and the recently rejected, the unverified rows' partial index.
 *
 * Defends: SQL outside a store; one seller's rows reached through another. Does not defend: rows of the wrong
 * shape in the database (the migrations' constraints do).
 */
import type { Knex } from 'knex';
import { readKeysetPage, whereAfter, type PageRequest } from '../../db/keyset-cursor.js';
import type { MatchableEndpoint } from '../../../shared/endpoint-matcher.js';
import type { LedgerStatus } from '../../../shared/api-responses/seller-ledger-responses.js';
import type {
  EndpointRoutes,
  LedgerRange,
  LedgerRow,
  LedgerTotal,
  NewLedgerRow,
  PayToStore,
  PayoutRow,
  PendingRowCounts,
  RevenueDays,
  SellerLedgerStore,
} from './ledger-stores.js';
import type { RowPage } from './seller-stores.js';

/** The id shapes of the rows the lists' page cursors name. */
const LEDGER_ENTRY_ID = /^led_[0-9a-f]{24}$/;
const PAYOUT_FLUSH_ID = /^po_[0-9a-f]{24}$/;

export class PgSellerLedgerStore implements SellerLedgerStore {
  constructor(private readonly knex: Knex) {}

  async hasEndpoint(sellerId: string, endpointId: string): Promise<boolean> {
    return !!(await this.knex('endpoints').where({ id: endpointId, seller_id: sellerId }).first('id'));
  }

  async hasRecipient(sellerId: string, network: string): Promise<boolean> {
    const evm = this.knex.raw(`left(address, 2) = '0x'`);
    const q = this.knex('sellers_pay_to').where({ seller_id: sellerId });
    if (await (network.startsWith('solana:') ? q.whereNot(evm) : q.where(evm)).first('address')) return true;
    return !!(await this.knex('platform_collection_wallets').where({ seller_id: sellerId, network }).first('address'));
  }

  async reportOnce(row: NewLedgerRow): Promise<{ created: boolean; stored: LedgerRow }> {
    const inserted = await this.knex('ledger_entries')
      .insert(row)
      .onConflict(['seller_id', 'tx_hash'])
      .ignore()
      .returning('id');
    const stored = (await this.knex('ledger_entries')
      .where({ seller_id: row.seller_id, tx_hash: row.tx_hash })
      .first()) as LedgerRow;
    return { created: inserted.length > 0, stored };
  }

  pageOf(
    sellerId: string,
    range: LedgerRange & { status?: LedgerStatus | undefined },
    request: PageRequest,
  ): Promise<RowPage<LedgerRow>> {
    const rows = this.rowsIn(sellerId, range);
    if (range.status) rows.andWhere({ status: range.status });
    return readKeysetPage<LedgerRow>(rows, request, LEDGER_ENTRY_ID, 'desc');
  }

  async verifiedByEndpoint(sellerId: string, range: LedgerRange): Promise<LedgerTotal[]> {
    const rows = (await this.rowsIn(sellerId, range)
      .andWhere({ status: 'verified' })
      .select('endpoint_id')
      .sum({ total: 'amount_micro' })
      .count({ n: '*' })
      .groupBy('endpoint_id')) as Array<{ endpoint_id: string | null; total: string; n: string }>;
    return rows.map((r) => ({ key: r.endpoint_id ?? '', total: r.total, n: r.n }));
  }

  async revenueDays(sellerId: string, days: RevenueDays, endpointId?: string): Promise<LedgerTotal[]> {
    const query = this.knex('seller_revenue_days').where({ seller_id: sellerId });
    if (days.first) query.andWhere('day', '>=', days.first);
    if (days.end) query.andWhere('day', '<', days.end);
    if (endpointId) query.andWhere({ endpoint_key: endpointId });
    const rows = (await query
      .select('endpoint_key')
      .sum({ total: 'total_micro' })
      .sum({ n: 'entries' })
      .groupBy('endpoint_key')) as Array<{ endpoint_key: string; total: string; n: string }>;
    return rows.map((r) => ({ key: r.endpoint_key, total: r.total, n: r.n }));
  }

  async unverifiedByStatus(sellerId: string, range: LedgerRange): Promise<LedgerTotal[]> {
    const rows = (await this.rowsIn(sellerId, range)
      .whereNot({ status: 'verified' })
      .select('status')
      .sum({ total: 'amount_micro' })
      .count({ n: '*' })
      .groupBy('status')) as Array<{ status: string; total: string; n: string }>;
    return rows.map((r) => ({ key: r.status, total: r.total, n: r.n }));
  }

  async unverifiedDays(sellerId: string, days: RevenueDays, endpointId?: string): Promise<LedgerTotal[]> {
    const query = this.knex('seller_unverified_days').where({ seller_id: sellerId });
    if (days.first) query.andWhere('day', '>=', days.first);
    if (days.end) query.andWhere('day', '<', days.end);
    if (endpointId) query.andWhere({ endpoint_key: endpointId });
    const rows = (await query
      .select('status')
      .sum({ total: 'total_micro' })
      .sum({ n: 'entries' })
      .groupBy('status')) as Array<{ status: string; total: string; n: string }>;
    return rows.map((r) => ({ key: r.status, total: r.total, n: r.n }));
  }

  async rowsAfter(
    sellerId: string,
    range: LedgerRange,
    after: { created_at: Date; id: string } | undefined,
    limit: number,
  ): Promise<LedgerRow[]> {
    const query = this.rowsIn(sellerId, range)
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(limit);
    return (await (after ? whereAfter(query, { at: after.created_at, id: after.id }) : query)) as LedgerRow[];
  }

  payoutsOf(sellerId: string, request: PageRequest): Promise<RowPage<PayoutRow>> {
    return readKeysetPage<PayoutRow>(
      this.knex('payout_flushes').where({ seller_id: sellerId }),
      request,
      PAYOUT_FLUSH_ID,
      'desc',
    );
  }

  async payablesOf(
    sellerId: string,
  ): Promise<{ earned_micro: string; paid_micro: string; advance_micro: string } | undefined> {
    return (await this.knex('seller_payables')
      .where({ seller_id: sellerId })
      .first('earned_micro', 'paid_micro', 'advance_micro')) as
      { earned_micro: string; paid_micro: string; advance_micro: string } | undefined;
  }

  async pendingCollected(sellerId: string): Promise<{ total: string | null; n: string } | undefined> {
    const [pending] = (await this.knex('ledger_entries')
      .where({ seller_id: sellerId, status: 'pending', payout_mode: 'platform_mor' })
      .sum({ total: 'amount_micro' })
      .count({ n: '*' })) as Array<{ total: string | null; n: string }>;
    return pending;
  }

  /** The seller's ledger rows within `from` (inclusive) and `to` (exclusive), for one endpoint when given. */
  private rowsIn(sellerId: string, range: LedgerRange): Knex.QueryBuilder {
    const query = this.knex('ledger_entries').where({ seller_id: sellerId });
    if (range.from) query.andWhere('created_at', '>=', range.from);
    if (range.to) query.andWhere('created_at', '<', range.to);
    if (range.endpoint_id) query.andWhere({ endpoint_id: range.endpoint_id });
    return query;
  }
}

export class PgEndpointRoutes implements EndpointRoutes {
  constructor(private readonly knex: Knex) {}

  async versionOf(sellerId: string): Promise<string | undefined> {
    const row = (await this.knex('sellers').where({ id: sellerId }).first('endpoints_version')) as
      { endpoints_version: string } | undefined;
    return row && String(row.endpoints_version);
  }

  async matchableOf(sellerId: string): Promise<MatchableEndpoint[]> {
    return (await this.knex('endpoints')
      .where({ seller_id: sellerId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select('id', 'method', 'path', 'path_pattern')) as MatchableEndpoint[];
  }
}

export class PgPendingRowCounts implements PendingRowCounts {
  constructor(private readonly knex: Knex) {}

  async reported(sellerId: string, hashes: readonly string[]): Promise<number> {
    const [row] = (await this.knex('ledger_entries')
      .where({ seller_id: sellerId })
      .whereIn('tx_hash', [...hashes])
      .count({ n: '*' })) as Array<{ n: string }>;
    return Number(row?.n ?? 0);
  }

  async pending(sellerId: string, upTo: number): Promise<number> {
    const result = await this.knex.raw(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM ledger_entries WHERE seller_id = ? AND status = 'pending' LIMIT ?) p`,
      [sellerId, upTo],
    );
    return (result.rows as Array<{ n: number }>)[0]?.n ?? 0;
  }

  async pendingOfAccount(accountId: string, upTo: number): Promise<number> {
    // The account's sellers on sellers (account_id, …), each one's pending rows on their own index.
    const result = await this.knex.raw(
      `SELECT count(*)::int AS n FROM (
         SELECT 1 FROM sellers s JOIN ledger_entries e ON e.seller_id = s.id AND e.status = 'pending'
          WHERE s.account_id = ? LIMIT ?) p`,
      [accountId, upTo],
    );
    return (result.rows as Array<{ n: number }>)[0]?.n ?? 0;
  }

  async rejectedRecently(sellerId: string, windowSeconds: number, upTo: number): Promise<number> {
    // On the unverified rows' partial index (seller_id, created_at): the window's pending rows (within their cap)
    // and at most `upTo` rejected ones are read, however many the seller has older.
    const result = await this.knex.raw(
      `SELECT count(*)::int AS n FROM (
         SELECT 1 FROM ledger_entries
          WHERE seller_id = ? AND status <> 'verified' AND status = 'rejected'
            AND created_at >= now() - make_interval(secs => ?) LIMIT ?) r`,
      [sellerId, windowSeconds, upTo],
    );
    return (result.rows as Array<{ n: number }>)[0]?.n ?? 0;
  }
}

export class PgPayToStore implements PayToStore {
  constructor(private readonly knex: Knex) {}

  async add(sellerId: string, address: string, signature: string, at: Date): Promise<void> {
    await this.knex('sellers_pay_to')
      .insert({ seller_id: sellerId, address, signature, created_at: at })
      .onConflict(['seller_id', 'address'])
      .ignore();
  }

  async recheckForPayTo(sellerId: string, at: Date, caps: { perSeller: number; perAccount: number }): Promise<void> {
    // One statement: the pending counts (as the report path counts them, on the pending rows' own index, at most
    // a cap of them: the seller's, and its account's sellers') and the rows it reopens are read from the same
    // snapshot. Rows already pending stay counted; only rejected ones add to the counts, so only they are bounded.
    await this.knex.raw(
      `UPDATE ledger_entries SET status = 'pending', reason = 'awaiting_verification', next_check_at = ?
        WHERE seller_id = ?
          AND ((status = 'pending' AND reason = 'pay_to_not_registered')
            OR (status = 'rejected' AND reason = 'recipient_mismatch' AND id IN (
              SELECT id FROM ledger_entries
               WHERE seller_id = ? AND status = 'rejected' AND reason = 'recipient_mismatch'
               ORDER BY created_at DESC, id DESC
               LIMIT GREATEST(0, LEAST(
                 ?::int - (SELECT count(*) FROM (
                   SELECT 1 FROM ledger_entries WHERE seller_id = ? AND status = 'pending' LIMIT ?) p),
                 ?::int - (SELECT count(*) FROM (
                   SELECT 1 FROM sellers s JOIN ledger_entries e ON e.seller_id = s.id AND e.status = 'pending'
                    WHERE s.account_id = (SELECT account_id FROM sellers WHERE id = ?) LIMIT ?) a))))))`,
      [at, sellerId, sellerId, caps.perSeller, sellerId, caps.perSeller, caps.perAccount, sellerId, caps.perAccount],
    );
  }

  async listOf(sellerId: string): Promise<Array<{ address: string; created_at: Date }>> {
    return (await this.knex('sellers_pay_to')
      .where({ seller_id: sellerId })
      .orderBy([{ column: 'created_at' }, { column: 'address' }])
      .select('address', 'created_at')) as Array<{ address: string; created_at: Date }>;
  }
}
