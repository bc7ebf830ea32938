/**
 * A wallet paid past its velocity window through HTTP, the real signer and PostgreSQL, with an injected
 * clock: once every payment time its remembered snapshot knew has left the window, the window is read on
 * (policy/velocity-window.ts) — only the rows from the last known time to the window's start and the
 * next times in it, not every payment of the window — and each decision counts exactly what a full read
 * counts, payments at the same millisecond as the last known one included.
 */
import assert from 'node:assert/strict';
import { SNAPSHOT_SQL, VELOCITY_READ_ON_SQL } from '../../../src/api/pay/store/pay-statements.js';
import { snapshotQuery } from '../../../src/api/pay/store/pg-pay-stores.js';
import { timestampFromUs, VELOCITY_TIMES_KEPT } from '../../../policy/velocity-window.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';

const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const T = Date.parse('2026-11-22T13:00:00Z');
const MAX_COUNT = 200;
const WINDOW_SECONDS = 10;

/** Rows a statement's plan read from authorizations (returned or filtered out), by EXPLAIN ANALYZE. */
function authorizationRowsTouched(plan: any): number {
  let rows = 0;
  const visit = (node: any) => {
    if (node['Relation Name'] === 'authorizations')
      rows += (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops'];
    for (const child of node.Plans ?? []) visit(child);
  };
  visit(plan[0].Plan);
  return rows;
}

describe('velocity window read on (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let token: string;
  let now = new Date(T);

  before(async () => {
    t = await startTestTreasury({ clock: () => now });
    token = await mintAgentKey(t, 'payer');
  });
  after(async () => {
    await t?.stop();
  });

  const pay = (walletId: string) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token,
      body: {
        payment_requirements: paymentRequirements({
          amount: '1',
          maxTimeoutSeconds: 300,
          resource: 'https://api.example.com/search',
          description: 'search',
          mimeType: 'application/json',
        }),
      },
    });
  const snapshots = async (source: 'read' | 'velocity_read_on') =>
    Number(
      (await t.request('GET', '/metrics')).body.match(
        new RegExp(`treasury_pay_snapshots_total\\{source="${source}"\\} (\\d+)`),
      )?.[1] ?? 0,
    );

  /**
   * Rows of authorizations `sql` touches, through the indexes: on a table of a few hundred rows PostgreSQL may
   * rather scan it whole (it did on a busy CI run), which says nothing of the statement's shape; on a table of
   * production size it reads the index ranges the statement names, as it does here with sequential scans off.
   */
  async function explain(sql: string, params: unknown[]): Promise<number> {
    return t.db.knex.transaction(async (trx) => {
      await trx.raw('SET LOCAL enable_seqscan = off');
      const result = await trx.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params as any[]);
      return authorizationRowsTouched(result.rows[0]['QUERY PLAN']);
    });
  }

  it('decides past the window on the count a full read gives, reading only the rows that left since its last known time', async () => {
    const res = await t.request('POST', '/v1/wallets', {
      token,
      body: { policy: { velocity_cap: { max_count: MAX_COUNT, window_seconds: WINDOW_SECONDS } } },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const walletId = res.body.id as string;
    const paidMs: number[] = [];
    const payAt = async (ms: number) => {
      now = new Date(T + ms);
      const inWindow = paidMs.filter((p) => p > ms - WINDOW_SECONDS * 1000).length;
      const paid = await pay(walletId);
      assert.equal(paid.status, 200, `at ${ms} ms: ${JSON.stringify(paid.body)}`);
      assert.equal(paid.body.headroom.velocity_remaining, MAX_COUNT - inWindow - 1, `at ${ms} ms`);
      paidMs.push(ms);
    };

    // 150 payments, three at each millisecond 20 ms apart: the snapshot knows the first 32 times, the 32nd
    // (T + 200 ms) shared by the 31st and the 33rd payment, which it does not know.
    for (let i = 0; i < 150; i++) await payAt(Math.floor(i / 3) * 20);
    const [reads, readsOn] = [await snapshots('read'), await snapshots('velocity_read_on')];

    // At T + 10.201 s every known time has left, and so have three payments at T + 200 ms, two of them known.
    now = new Date(T + 10_201);
    const readOnParams = [timestampFromUs((T + 200) * 1000), walletId, now, WINDOW_SECONDS];
    const [found] = (await t.db.knex.raw(VELOCITY_READ_ON_SQL, readOnParams)).rows;
    assert.equal(found.found.left, 3);
    assert.equal(found.found.oldest_us.length, VELOCITY_TIMES_KEPT);
    const readOnRows = await explain(VELOCITY_READ_ON_SQL, readOnParams);
    const snapshotRows = await explain(SNAPSHOT_SQL, [...snapshotQuery(walletId, now, undefined).params]);
    assert.ok(readOnRows <= 3 + VELOCITY_TIMES_KEPT, `the read on touched ${readOnRows} rows`);
    assert.ok(snapshotRows >= 117, `a full read counts the window's 117 payments (${snapshotRows} rows touched)`);

    await payAt(10_201);
    // The times read on (T + 220 ms to T + 420 ms) leave too, with the unknown third payment at T + 420 ms.
    await payAt(10_421);
    // Past the window altogether: nothing left in it, which the read on finds (fewer times than a list holds)
    // without counting the payments that left since its last known time (T + 640 ms, the 98th payment's).
    now = new Date(T + 25_000);
    const quietParams = [timestampFromUs((T + 640) * 1000), walletId, now, WINDOW_SECONDS];
    const [quiet] = (await t.db.knex.raw(VELOCITY_READ_ON_SQL, quietParams)).rows;
    assert.deepEqual(quiet.found, { left: 0, oldest_us: [] });
    const quietRows = await explain(VELOCITY_READ_ON_SQL, quietParams);
    assert.ok(quietRows <= 1, `the read on of a quiet window touched ${quietRows} rows`);
    await payAt(25_000);
    await payAt(25_000);

    assert.equal(await snapshots('read'), reads, 'the wallet was not read again in full');
    assert.equal((await snapshots('velocity_read_on')) - readsOn, 3);
    const dry = await t.request('POST', `/v1/wallets/${walletId}/policy/evaluate`, {
      token,
      body: { to: SELLER, amount_usd: '0.000001' },
    });
    assert.equal(dry.body.headroom.velocity_remaining, MAX_COUNT - 3, 'a full read counts what the memory counted');
  });
});
