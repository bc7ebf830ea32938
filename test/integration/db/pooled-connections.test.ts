/**
 * The pay path's pooled connections (src/api/db/wallet-transaction.ts) when PostgreSQL ends a session under a
 * statement (a failover, a restart, pg_terminate_backend): the statement fails, the broken connection is
 * destroyed by the pool and its slot is free again — more broken connections than the pool holds leave it
 * serving, not waiting for a connection until it times out. A locked transaction that fails after BEGIN
 * never hands an open or aborted transaction to the next user of its connection.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKnex, type Knex } from '../../../src/api/db/knex-client.js';
import { runStatement, withWalletTransaction } from '../../../src/api/db/wallet-transaction.js';
import { useTestDatabase, type TestDatabase } from '../../support/test-database.js';

describe('pooled connections of the pay path (PostgreSQL)', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let pool: Knex;
  useTestDatabase((d) => {
    db = d;
    // Two connections, so that two leaked slots would be all of them.
    pool = createKnex(db.connectionString, 2, 'treasury-probe');
  });
  after(async () => {
    await pool?.destroy();
  });

  /**
   * Ends the session running exactly `sql` once it is running; resolves with how many it ended. It polls until
   * the statement shows as active, for as long as 20 s: on a loaded machine a statement can take seconds to
   * get there, and the pg_sleep(30) under test is still running well before then. Only the outcome (one
   * session ended, under its statement) is asserted, never how soon. Each cut names a statement of its own:
   * a session ended a moment ago can still show as active with its old statement until its process exits,
   * and cutting it again would leave the statement under test running to its end.
   */
  async function cutWhileRunning(sql: string): Promise<number> {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const r = await db.knex.raw(
        "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'treasury-probe' AND state = 'active' AND query = ?",
        [sql],
      );
      if (r.rows[0].n > 0) return r.rows[0].n;
      await sleep(10);
    }
    return 0;
  }

  it('a connection cut under its statement gives its slot back: three in a row on a pool of two, then it still serves', async () => {
    for (let i = 0; i < 3; i++) {
      const sql = `SELECT pg_sleep(30) AS cut_${i}`;
      const running = runStatement(pool, sql, [], `probe_sleep_${i}`);
      const outcome = running.then(
        () => 'finished',
        (err: Error) => err,
      );
      assert.equal(await cutWhileRunning(sql), 1, `statement ${i + 1} was running on a pooled connection`);
      assert.ok((await outcome) instanceof Error, 'the statement failed with its connection');
    }
    // No slot is held by a cut connection: the pool's own count, not a wall-clock budget.
    const tarn = (pool.client as { pool: { numUsed(): number } }).pool;
    assert.equal(tarn.numUsed(), 0, 'no slot of the pool is still held by a cut connection');
    // And it serves. A pool whose slots leaked waits for knex's 60 s acquire time-out, so a 30 s deadline
    // tells the two apart however loaded the machine is.
    const served = await Promise.race([
      runStatement<{ one: number }>(pool, 'SELECT 1 AS one', [], 'probe_one'),
      sleep(30_000).then(() => 'pool exhausted'),
    ]);
    assert.deepEqual(served, [{ one: 1 }]);
  });

  it('a locked transaction cut under its work, and one whose statement failed after BEGIN: both slots come back clean', async () => {
    const sql = 'SELECT pg_sleep(30) AS cut_in_transaction';
    const cut = withWalletTransaction(pool, 'w_probe_1', (tx) => tx.query(sql, []));
    const cutOutcome = cut.then(
      () => 'finished',
      (err: Error) => err,
    );
    assert.equal(await cutWhileRunning(sql), 1);
    assert.ok((await cutOutcome) instanceof Error);
    // Statements PostgreSQL refuses after BEGIN went out — in the opening read that shares BEGIN's round trip,
    // and in the transaction's own work: each is rolled back before its connection goes back to the pool.
    await assert.rejects(
      withWalletTransaction(
        pool,
        'w_probe_2',
        async () => 'unreached',
        () => ({ sql: 'SELECT 1/0 AS x', params: [] }),
      ),
      /division by zero/,
    );
    await assert.rejects(
      withWalletTransaction(pool, 'w_probe_3', (tx) => tx.query('SELECT 1/0', [])),
      /division by zero/,
    );
    const lingering = await db.knex.raw(
      "SELECT state FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'treasury-probe' AND state LIKE 'idle in transaction%'",
    );
    assert.deepEqual(lingering.rows, [], 'no pooled connection was left inside a transaction');
    // Both connections of the pool at once still serve.
    const both = await Promise.all(
      [1, 2].map(() => runStatement<{ one: number }>(pool, 'SELECT 1 AS one FROM pg_sleep(0.2)', [], 'probe_both')),
    );
    assert.deepEqual(both, [[{ one: 1 }], [{ one: 1 }]]);
  });
});
