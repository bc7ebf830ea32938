/**
 * A seller's rejected ledger rows cannot grow without bound, nor make the revenue summary read them all
 * (src/api/sellers/ledger/ledger-pending-cap.ts, seller_unverified_days of migration 20261202120000), through the
 * real API, services, stores and PostgreSQL; rows of made-up transactions are bulk-inserted as the verifier leaves
 * them (status `rejected`, transaction_not_found), counting rows read, never milliseconds.
 * - A seller with TREASURY_LEDGER_MAX_REJECTED_PER_SELLER (20,000 by default) rejected rows created in the last
 *   24 h has its reports of new transactions refused whole (429 `ledger_rejected_budget_exhausted`, `seller_id`,
 *   `limit`, Retry-After); one fewer passes; another seller, and one whose rejected rows are older, report freely.
 * - The summary over 50,000 rejected rows reads no ledger row unranged, and, ranged, only the rows of its two
 *   partial edge days (twice: verified and unverified) (EXPLAIN ANALYZE of every query the service makes).
 * - Its `pending` and `rejected` figures are what summing the unverified rows answers (the query it made before),
 *   for every range and endpoint, after rows were rejected, reopened, verified, moved to another endpoint, deleted.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { formatUsd } from '../../../policy/money.js';
import { SellerLedgerService } from '../../../src/api/sellers/ledger/seller-ledger-service.js';
import { PgSellerLedgerStore } from '../../../src/api/sellers/store/pg-ledger-stores.js';
import type { SellerRow } from '../../../src/api/sellers/seller-views.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const NETWORK = 'eip155:84532';
const PAYER = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
const BUDGET = 20_000;

interface Seller {
  seller_id: string;
  pat: string;
}

/** Inserts `n` rows of `seller` as the verifier leaves them, `stepMs` apart from `start` (an SQL timestamptz). */
async function bulkRows(
  knex: Knex,
  seller: string,
  n: number,
  o: { start: string; stepMs: number; status?: string; endpointOf?: (string | null)[] },
): Promise<void> {
  const tag = randomBytes(8).toString('hex');
  const endpoints = o.endpointOf ?? [null];
  await knex.raw(
    `INSERT INTO ledger_entries
       (id, seller_id, endpoint_id, tx_hash, payer, amount_micro, network, payout_mode, status, reason, log_index,
        confirmations, verified_at, created_at)
     SELECT 'led_' || substr(md5(:tag || 'i' || i), 1, 24), :seller, (:endpoints::text[])[1 + i % :k],
            '0x' || md5(:tag || 'a' || i) || md5(:tag || 'b' || i), :payer, 1000 + i % 7, :network, 'direct',
            :status, CASE WHEN :status = 'verified' THEN NULL ELSE 'transaction_not_found' END,
            CASE WHEN :status = 'verified' THEN 0 END, CASE WHEN :status = 'verified' THEN 1 END,
            CASE WHEN :status = 'verified' THEN now() END, ${o.start} + i * make_interval(secs => :step)
       FROM generate_series(0, :n - 1) i`,
    {
      tag,
      seller,
      // A PostgreSQL array literal of endpoint ids (ids are [a-z0-9_]); NULL for rows of no endpoint.
      endpoints: `{${endpoints.map((e) => e ?? 'NULL').join(',')}}`,
      k: endpoints.length,
      payer: PAYER,
      network: NETWORK,
      status: o.status ?? 'rejected',
      step: o.stepMs / 1000,
      n,
    },
  );
}

/** What the summary answered before seller_unverified_days: the seller's unverified rows in range, by status. */
async function summedRows(knex: Knex, seller: string, from?: string, to?: string, endpoint?: string) {
  const q = knex('ledger_entries').where({ seller_id: seller }).whereNot({ status: 'verified' });
  if (from) q.andWhere('created_at', '>=', new Date(from));
  if (to) q.andWhere('created_at', '<', new Date(to));
  if (endpoint) q.andWhere({ endpoint_id: endpoint });
  const rows = (await q.select('status').sum({ total: 'amount_micro' }).count({ n: '*' }).groupBy('status')) as Array<{
    status: string;
    total: string;
    n: string;
  }>;
  const of = (status: string) => {
    const r = rows.find((x) => x.status === status);
    return { count: Number(r?.n ?? 0), total_usd: formatUsd(BigInt(r?.total ?? 0)) };
  };
  return { pending: of('pending'), rejected: of('rejected') };
}

/** Rows each table's scans read (returned or filtered out) over every query `run` makes, by EXPLAIN ANALYZE. */
async function rowsRead(knex: Knex, run: () => Promise<unknown>): Promise<Map<string, number>> {
  const queries: Array<{ sql: string; bindings: readonly unknown[] }> = [];
  const listen = (q: { sql: string; bindings?: readonly unknown[] }) => {
    if (q.sql.trim().toLowerCase().startsWith('select')) queries.push({ sql: q.sql, bindings: q.bindings ?? [] });
  };
  knex.on('query', listen);
  try {
    await run();
  } finally {
    knex.off('query', listen);
  }
  const read = new Map<string, number>();
  type Plan = Record<string, unknown> & { Plans?: Plan[] };
  const walk = (p: Plan) => {
    const table = p['Relation Name'] as string | undefined;
    if (table) {
      const n =
        Number(p['Actual Rows'] ?? 0) * Number(p['Actual Loops'] ?? 1) +
        Number(p['Rows Removed by Filter'] ?? 0) +
        Number(p['Rows Removed by Index Recheck'] ?? 0);
      read.set(table, (read.get(table) ?? 0) + n);
    }
    for (const c of p.Plans ?? []) walk(c);
  };
  // The statements as sent ($1, $2, … placeholders), on a connection of the pool's own.
  const client = knex.client as {
    acquireConnection(): Promise<{ query(sql: string, values: readonly unknown[]): Promise<{ rows: any[] }> }>;
    releaseConnection(c: unknown): Promise<void>;
  };
  const conn = await client.acquireConnection();
  try {
    for (const { sql, bindings } of queries) {
      const res = await conn.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, bindings);
      walk((res.rows[0]['QUERY PLAN'] as Array<{ Plan: Plan }>)[0]!.Plan);
    }
  } finally {
    await client.releaseConnection(conn);
  }
  return read;
}

describe("a seller's rejected ledger rows are bounded and not read by the revenue summary (HTTP, PostgreSQL)", function () {
  this.timeout(300_000);
  const t = useTestTreasury({ extraEnv: { TREASURY_LEDGER_VERIFY_INTERVAL_MS: '0' } });
  const row = () => ({
    tx_hash: `0x${randomBytes(32).toString('hex')}`,
    payer: PAYER,
    amount: '10000',
    network: NETWORK,
  });
  let session: string;
  const newSeller = async (name: string): Promise<Seller> => {
    const created = await t.request('POST', '/v1/sellers', { token: session, body: { name } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body;
  };

  before(async () => {
    ({ session } = await signInWithNewKey(t));
  });

  it('refuses new reports once the seller had its budget of rejected rows in the last 24 h; others report', async () => {
    const [a, b, old] = [await newSeller('Rejected A'), await newSeller('Clean B'), await newSeller('Old C')];
    const recent = `now() - interval '1 hour' - interval '1 millisecond'`;
    await bulkRows(t.db.knex, a.seller_id, BUDGET - 1, { start: recent, stepMs: -1 });
    await bulkRows(t.db.knex, old.seller_id, BUDGET, { start: `now() - interval '25 hours'`, stepMs: -1 });

    const under = await t.request('POST', '/v1/ledger', { token: a.pat, body: row() });
    assert.equal(under.status, 201, `one rejected row under the budget: ${JSON.stringify(under.body)}`);

    await bulkRows(t.db.knex, a.seller_id, 1, { start: recent, stepMs: 0 });
    const refused = await t.request('POST', '/v1/ledger', { token: a.pat, body: row() });
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.error_code, 'ledger_rejected_budget_exhausted');
    assert.deepEqual([refused.body.seller_id, refused.body.limit], [a.seller_id, BUDGET]);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    const batch = await t.request('POST', '/v1/ledger/batch', { token: a.pat, body: { rows: [row(), row()] } });
    assert.deepEqual([batch.status, batch.body.error_code], [429, 'ledger_rejected_budget_exhausted']);
    const stored = await t.db
      .knex('ledger_entries')
      .where({ seller_id: a.seller_id, status: 'pending' })
      .count({ n: '*' });
    assert.equal(Number(stored[0]!.n), 1, 'nothing of the refused reports was stored');

    for (const other of [b, old]) {
      const res = await t.request('POST', '/v1/ledger', { token: other.pat, body: row() });
      assert.equal(res.status, 201, `${other.seller_id}: ${JSON.stringify(res.body)}`);
    }
  });

  it('sums 50,000 rejected rows from their days: no ledger row read unranged, only the edge days ranged', async () => {
    const seller = await newSeller('Many Rejected');
    // 1,000 rows a day over 50 days.
    await bulkRows(t.db.knex, seller.seller_id, 50_000, {
      start: `'2026-09-01T00:00:00Z'::timestamptz`,
      stepMs: 86_400,
    });
    // The statistics a running service's autovacuum keeps: without them, whether and when autovacuum had analyzed
    // the bulk insert decided the plans read here (a busy machine's run once read all 50,000 rows twice).
    await t.db.knex.raw('ANALYZE ledger_entries');
    const row = (await t.db.knex('sellers').where({ id: seller.seller_id }).first()) as SellerRow;
    const service = new SellerLedgerService({
      store: new PgSellerLedgerStore(t.db.knex),
      clock: () => new Date(),
      endpoints: { endpointFor: async () => null },
    });
    const unranged = await rowsRead(t.db.knex, async () => {
      const summary = await service.revenue(row, {});
      assert.equal(summary.rejected.count, 50_000);
    });
    assert.equal(unranged.get('ledger_entries') ?? 0, 0, `ledger rows read unranged: ${[...unranged]}`);
    assert.ok((unranged.get('seller_unverified_days') ?? 0) <= 50, `rollup rows read: ${[...unranged]}`);

    const [from, to] = ['2026-09-05T12:00:00.000Z', '2026-10-10T06:00:00.000Z'];
    const edges = Number(
      (
        await t.db
          .knex('ledger_entries')
          .where({ seller_id: seller.seller_id })
          .andWhere((q) =>
            q
              .whereBetween('created_at', [new Date(from), new Date('2026-09-06T00:00:00.000Z')])
              .orWhereBetween('created_at', [new Date('2026-10-10T00:00:00.000Z'), new Date(to)]),
          )
          .count({ n: '*' })
      )[0]!.n,
    );
    let summary: Awaited<ReturnType<typeof service.revenue>> | undefined;
    const ranged = await rowsRead(t.db.knex, async () => {
      summary = await service.revenue(row, { from: new Date(from), to: new Date(to) });
    });
    assert.deepEqual(
      { pending: summary?.pending, rejected: summary?.rejected },
      await summedRows(t.db.knex, seller.seller_id, from, to),
    );
    assert.ok(
      // Each edge is read twice: its verified rows (revenue) and its unverified ones.
      (ranged.get('ledger_entries') ?? 0) <= 2 * edges,
      `ledger rows read ranged: ${ranged.get('ledger_entries')} (edge days hold ${edges} of 50,000)`,
    );
  });

  it('answers what summing the unverified rows answers, for every range and endpoint, as rows change', async () => {
    const seller = await newSeller('Unverified Mix');
    const endpoints: string[] = [];
    for (const path of ['/a', '/b']) {
      const res = await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
        token: seller.pat,
        body: { path, price: '0.01' },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      endpoints.push(res.body.endpoint_id);
    }
    const spread = {
      start: `'2026-11-19T23:00:00Z'::timestamptz`,
      stepMs: 3_600_000 + 7,
      endpointOf: [...endpoints, null],
    };
    for (const status of ['pending', 'rejected', 'verified'])
      await bulkRows(t.db.knex, seller.seller_id, 120, { ...spread, status });
    for (let i = 0; i < 3; i++) {
      const res = await t.request('POST', '/v1/ledger', {
        token: seller.pat,
        body: { ...row(), endpoint_id: endpoints[i % 2] },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    // As the verifier and a pay-to proof would move them (test fixture): rejected, reopened, verified; and moved
    // to another endpoint, then deleted, as no path of the API does, to hold every branch of the trigger.
    const mine = () => t.db.knex('ledger_entries').where({ seller_id: seller.seller_id });
    const ids = async (status: string, n: number) =>
      (await mine().where({ status }).orderBy('id').limit(n).pluck('id')) as string[];
    await mine()
      .whereIn('id', await ids('pending', 30))
      .update({ status: 'rejected', reason: 'transaction_not_found' });
    await mine()
      .whereIn('id', await ids('rejected', 20))
      .update({ status: 'pending', reason: 'awaiting_verification' });
    await mine()
      .whereIn('id', await ids('pending', 15))
      .update({ status: 'verified', reason: null, log_index: 0, confirmations: 1, verified_at: new Date() });
    await mine()
      .whereIn('id', await ids('pending', 10))
      .update({ endpoint_id: endpoints[1], amount_micro: 4242 });
    await mine()
      .whereIn('id', await ids('rejected', 5))
      .del();

    const bounds = [
      undefined,
      '2026-11-19T00:00:00.000Z',
      '2026-11-20T00:00:00.000Z',
      '2026-11-20T13:30:00.000Z',
      '2026-11-21T00:00:00.000Z',
      '2026-11-22T23:59:59.999Z',
      '2026-11-24T05:00:00.001Z',
      '2099-01-01T00:00:00.000Z',
    ];
    let checked = 0;
    for (const from of bounds)
      for (const to of bounds)
        for (const endpoint of [undefined, endpoints[1]]) {
          const query = new URLSearchParams({
            ...(from ? { from } : {}),
            ...(to ? { to } : {}),
            ...(endpoint ? { endpoint_id: endpoint } : {}),
          });
          const res = await t.request('GET', `/v1/ledger/revenue?${query}`, { token: seller.pat });
          assert.equal(res.status, 200, JSON.stringify(res.body));
          assert.deepEqual(
            { pending: res.body.pending, rejected: res.body.rejected },
            await summedRows(t.db.knex, seller.seller_id, from, to, endpoint),
            `from=${from} to=${to} endpoint=${endpoint}`,
          );
          checked++;
        }
    assert.equal(checked, bounds.length * bounds.length * 2);
    // The rollup is what the rows sum to, bucket by bucket.
    const rollup = await t.db.knex.raw(
      `SELECT day::text, endpoint_key, status, total_micro::text, entries::text FROM seller_unverified_days
        WHERE seller_id = ? AND entries <> 0 ORDER BY 1, 2, 3`,
      [seller.seller_id],
    );
    const rebuilt = await t.db.knex.raw(
      `SELECT (created_at AT TIME ZONE 'UTC')::date::text AS day, COALESCE(endpoint_id, '') AS endpoint_key, status,
              sum(amount_micro)::text AS total_micro, count(*)::text AS entries
         FROM ledger_entries WHERE seller_id = ? AND status <> 'verified' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      [seller.seller_id],
    );
    assert.deepEqual(rollup.rows, rebuilt.rows);
  });
});
