/**
 * The benchmark's payment history (bench/support/seed-payment-history.ts) on a real Treasury: it multiplies
 * the tables the pay path writes, all of it in the past, and a wallet's decisions afterwards are the ones it
 * would have had without it — the benchmark measures the same service on bigger tables.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { seedPaymentHistory } from '../../../bench/support/seed-payment-history.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';

describe('bench: seeded payment history', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  let client: pg.Client;

  before(async () => {
    t = await startTestTreasury();
    client = new pg.Client(t.db.connectionString);
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await t?.stop();
  });

  it('adds past payments, audit rows and spend windows, and leaves the current windows and decisions alone', async () => {
    const token = await mintAgentKey(t, 'bench-history');
    // Room for exactly three 1-USD payments today, and three in any 60 s.
    const created = await t.request('POST', '/v1/wallets', {
      token,
      body: { policy: { daily_cap_usd: '3', velocity_cap: { max_count: 3, window_seconds: 60 } } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const walletId = created.body.id as string;
    let key = 0;
    // An Idempotency-Key makes each payment decide on a fresh read of the wallet, history included.
    const pay = () =>
      t.request('POST', `/v1/wallets/${walletId}/pay`, {
        token,
        headers: { 'idempotency-key': `bench-history-${++key}` },
        body: { payment_requirements: paymentRequirements({ amount: '1000000' }) },
      });
    for (let i = 0; i < 2; i++) assert.equal((await pay()).status, 200);

    const count = async (sql: string) => Number((await client.query(sql)).rows[0]!.n);
    const auditBefore = await count('SELECT count(*) AS n FROM audit_events');
    const windowsBefore = await client.query(
      'SELECT window_kind, window_start::text, spent_micro::text, payment_count FROM wallet_spend_totals ORDER BY 1, 2',
    );

    const seeded = await seedPaymentHistory(client, { copies: 50, days: 30 });
    assert.equal(seeded.authorizations, 100, 'two payments, fifty copies each');
    assert.equal(seeded.auditEvents, auditBefore * 50);
    assert.ok(seeded.spendWindows >= 30, `past day windows at least: ${seeded.spendWindows}`);
    assert.equal(await count('SELECT count(*) AS n FROM authorizations'), 102);

    // All of it in the past: before the current UTC day, expired, signed, and no current window touched.
    assert.equal(
      await count(
        `SELECT count(*) AS n FROM authorizations WHERE id LIKE 'hist_%' AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
      ),
      0,
    );
    assert.equal(
      await count(
        `SELECT count(*) AS n FROM authorizations WHERE id LIKE 'hist_%' AND (valid_before > extract(epoch from now()) OR status <> 'signed')`,
      ),
      0,
    );
    assert.equal(
      await count(`SELECT count(DISTINCT nonce) AS n FROM authorizations`),
      102,
      'every copy has a nonce of its own',
    );
    // Before seeding the wallet had only its current windows; they are unchanged, and every past one starts before them.
    const windowsAfter = await client.query(
      'SELECT window_kind, window_start::text, spent_micro::text, payment_count FROM wallet_spend_totals ORDER BY 1, 2',
    );
    const current = new Map(windowsBefore.rows.map((r) => [r.window_kind as string, r.window_start as string]));
    assert.deepEqual([...current.keys()].sort(), ['day', 'month', 'week']);
    assert.deepEqual(
      windowsAfter.rows.filter((r) => current.get(r.window_kind as string) === r.window_start),
      windowsBefore.rows,
      'the current day, week and month windows are unchanged',
    );
    for (const r of windowsAfter.rows)
      assert.ok(
        (r.window_start as string) <= current.get(r.window_kind as string)!,
        `${r.window_kind} ${r.window_start} is not after the current one`,
      );

    // The wallet's decisions: the third payment is allowed, the fourth denied by today's cap and the velocity cap.
    assert.equal((await pay()).status, 200);
    const denied = await pay();
    assert.equal(denied.status, 403);
    assert.deepEqual([...denied.body.rules].sort(), ['daily_cap_usd', 'velocity_cap']);
  });
});
