/**
 * The knex client every process builds: its connections carry the process's name in pg_stat_activity, and
 * knex's own warnings (a refused or lost connection) arrive as structured log lines, one line each, with no
 * password in them — not as console output.
 */
import assert from 'node:assert/strict';
import { createKnex, type KnexLog } from '../../../src/db/knex-client.js';
import { isDatabaseUnavailable } from '../../../src/db/is-database-unavailable.js';
import { freePort, useTestDatabase, type TestDatabase } from '../../support/test-database.js';

function captureLog() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const log: KnexLog = {
    warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
    error: (fields, message) => lines.push({ level: 'error', fields, message }),
  };
  return { log, lines };
}

describe('knex client (PostgreSQL)', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  useTestDatabase((d) => (db = d));

  it('names its connections in pg_stat_activity', async () => {
    const knex = createKnex(db.connectionString, 1, 'treasury-probe');
    try {
      const row = (await knex.raw('SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()')).rows[0];
      assert.equal(row.application_name, 'treasury-probe');
    } finally {
      await knex.destroy();
    }
  });

  it('a refused connection: the query fails as database-unavailable, and knex says so in one structured line without the password', async () => {
    const { log, lines } = captureLog();
    const knex = createKnex(`postgres://treasury:s3cret-pw@127.0.0.1:${await freePort()}/nowhere`, 1, 'treasury-probe', log);
    try {
      const err = await knex.raw('SELECT 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err, 'the query failed');
      assert.equal(isDatabaseUnavailable(err), true, String(err));
      const warning = lines.find((l) => l.message === 'database client warning');
      assert.ok(warning, JSON.stringify(lines));
      assert.match(String(warning.fields.detail), /^Acquire connection error: .*ECONNREFUSED/);
      for (const line of lines) {
        assert.doesNotMatch(String(line.fields.detail), /\n/, 'one line');
        assert.doesNotMatch(JSON.stringify(line), /s3cret-pw/, 'no password');
      }
    } finally {
      await knex.destroy();
    }
  });
});
