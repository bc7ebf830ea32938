/**
 * The group-commit queues' own connection: always generic plans there (and only there), a broken
 * connection is replaced on the next statement, and a closed one refuses statements.
 */
import assert from 'node:assert/strict';
import { StatementConnection } from '../../../src/api/pay/store/statement-connection.js';
import { useTestDatabase, type TestDatabase } from '../../support/test-database.js';

describe('statement connection (PostgreSQL)', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  useTestDatabase((d) => (db = d));

  it('runs its statements with generic plans, while the pool keeps the default', async () => {
    const conn = new StatementConnection(db.knex);
    try {
      const [own] = await conn.query<{ mode: string }>(
        'SELECT current_setting(?) AS mode',
        ['plan_cache_mode'],
        'test_plan_mode',
      );
      assert.equal(own!.mode, 'force_generic_plan');
      const pooled = (await db.knex.raw("SELECT current_setting('plan_cache_mode') AS mode")).rows[0];
      assert.equal(pooled.mode, 'auto');
      // A prepared statement over an array is planned once: EXPLAIN EXECUTE shows the generic plan ($1).
      await conn.query('SELECT id FROM wallets WHERE id = ANY(?::text[])', [['w_1', 'w_2']], 'test_by_ids');
      const plan = (
        await conn.query<{ 'QUERY PLAN': string }>("EXPLAIN EXECUTE test_by_ids('{w_3}')", [], 'test_explain')
      )
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      assert.match(plan, /\$1/, `the plan refers to the parameter, not to a value:\n${plan}`);
    } finally {
      await conn.close();
    }
  });

  it("refuses a statement with PostgreSQL's own error: its code and constraint, which the writer's isolation reads", async () => {
    const conn = new StatementConnection(db.knex);
    try {
      await conn.query('CREATE TEMP TABLE t_unique (k text PRIMARY KEY)', [], 'test_create');
      await conn.query('INSERT INTO t_unique (k) VALUES (?)', ['a'], 'test_insert');
      await assert.rejects(conn.query('INSERT INTO t_unique (k) VALUES (?)', ['a'], 'test_insert'), (err: unknown) => {
        const pgErr = err as { code?: string; constraint?: string };
        assert.equal(pgErr.code, '23505');
        assert.equal(pgErr.constraint, 't_unique_pkey');
        return true;
      });
      // The connection stays usable after a statement's own error.
      const rows = await conn.query<{ k: string }>('SELECT k FROM t_unique', [], 'test_select');
      assert.deepEqual(rows, [{ k: 'a' }]);
    } finally {
      await conn.close();
    }
  });

  it('replaces a connection that broke, and refuses statements once closed', async () => {
    let opened = 0;
    const conn = new StatementConnection(db.knex, { onOpen: () => opened++ });
    const pid = async () =>
      Number((await conn.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', [], 'test_pid'))[0]!.pid);
    const first = await pid();
    await db.knex.raw('SELECT pg_terminate_backend(?)', [first]);
    // The statement that meets the terminated backend fails (FATAL) — unless the client already heard the
    // backend's goodbye, and then that statement runs on a new connection. Either way, a new connection follows.
    const afterTermination = await pid().catch((err: unknown) => {
      assert.match(String(err), /terminating connection/);
      return undefined;
    });
    const next = afterTermination ?? (await pid());
    assert.notEqual(next, first);
    assert.equal(await pid(), next, 'the new connection is kept');
    assert.equal(opened, 2, 'one connection at first, one replacing it (what the opened-connections metric counts)');
    await conn.close();
    await assert.rejects(pid(), /closed/);
  });
});
