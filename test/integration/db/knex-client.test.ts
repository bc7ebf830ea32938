/**
 * The knex client every process builds: its connections carry the process's name in pg_stat_activity, and
 * knex's own warnings (a refused or lost connection) arrive as structured log lines, one line each, with no
 * password in them — not as console output; the API's session limits are PostgreSQL's settings on every
 * session, and a statement past them is cancelled as database-busy with the session still usable; an idle
 * connection stays open for the pool's idle time-out (the API's TREASURY_DB_POOL_IDLE_MS), then is closed, and
 * sends TCP keepalives meanwhile.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type net from 'node:net';
import pg from 'pg';
import { createKnex, type KnexLog } from '../../../src/api/db/knex-client.js';
import { isDatabaseUnavailable } from '../../../src/api/db/is-database-unavailable.js';
import { isDatabaseBusy } from '../../../src/api/db/is-database-busy.js';
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
      const row = (await knex.raw('SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()'))
        .rows[0];
      assert.equal(row.application_name, 'treasury-probe');
    } finally {
      await knex.destroy();
    }
  });

  it('a refused connection: the query fails as database-unavailable, and knex says so in one structured line without the password', async () => {
    const { log, lines } = captureLog();
    const knex = createKnex(
      `postgres://treasury:s3cret-pw@127.0.0.1:${await freePort()}/nowhere`,
      1,
      'treasury-probe',
      log,
    );
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

  it('session limits: set on every session; a lock wait or a statement past them is cancelled as busy and the session serves on; none without limits', async () => {
    const limited = createKnex(db.connectionString, 1, 'treasury-probe', undefined, {
      statementTimeoutMs: 300,
      lockTimeoutMs: 200,
      idleInTransactionTimeoutMs: 60_000,
    });
    const plain = createKnex(db.connectionString, 1, 'treasury-probe');
    const holder = createKnex(db.connectionString, 1, 'treasury-probe');
    try {
      const setting = async (k: typeof limited, name: string) =>
        (await k.raw(`SELECT current_setting('${name}') AS v`)).rows[0].v as string;
      assert.equal(await setting(limited, 'statement_timeout'), '300ms');
      assert.equal(await setting(limited, 'lock_timeout'), '200ms');
      assert.equal(await setting(limited, 'idle_in_transaction_session_timeout'), '1min');
      assert.equal(await setting(plain, 'lock_timeout'), '0', 'migrations and tools run without');

      const failure = (p: Promise<unknown>) =>
        p.then(
          () => undefined,
          (e: unknown) => e,
        );
      await holder.transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(4242)');
        const lockErr = await failure(limited.raw('SELECT pg_advisory_xact_lock(4242)'));
        assert.equal((lockErr as { code?: string }).code, '55P03', String(lockErr));
        assert.equal(isDatabaseBusy(lockErr), true);
        // Cancelled by the lock time-out while the lock is still held (order, not a wall-clock budget).
        const held = await trx.raw(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()",
        );
        assert.equal(held.rows[0].n, 1, 'cancelled after the lock time-out, not when the lock came free');
      });
      const slowErr = await failure(limited.raw('SELECT pg_sleep(2)'));
      assert.equal((slowErr as { code?: string }).code, '57014', String(slowErr));
      assert.equal(isDatabaseBusy(slowErr), true);
      assert.equal((await limited.raw('SELECT 1 AS one')).rows[0].one, 1, 'the session serves on');
    } finally {
      await Promise.all([limited.destroy(), plain.destroy(), holder.destroy()]);
    }
  });

  it('keeps an idle connection until its idle time-out, then closes it: the next query opens a new session', async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const backend = async (knex: ReturnType<typeof createKnex>) =>
      (await knex.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    // Margins of seconds either way: the pool looks for idle connections once a second.
    const keeping = createKnex(db.connectionString, 1, 'treasury-probe', undefined, undefined, 20_000);
    const closing = createKnex(db.connectionString, 1, 'treasury-probe', undefined, undefined, 1_000);
    try {
      const [kept, closed] = [await backend(keeping), await backend(closing)];
      await sleep(3_500);
      assert.equal(await backend(keeping), kept, 'idle 3.5 s of 20 s allowed: the same session serves');
      assert.notEqual(await backend(closing), closed, 'idle 3.5 s of 1 s allowed: a new session');
    } finally {
      await Promise.all([keeping.destroy(), closing.destroy()]);
    }
  });

  it('its connections send TCP keepalives while idle (the kernel arms their keepalive timer); a plain client does not', async () => {
    /**
     * The kernel's timer on the established client socket `socket`: /proc/net/tcp's `tr` field, 2 = keepalive.
     * Matched by both ports and the ESTABLISHED state (01): a closed connection's TIME_WAIT entry (timer 3) may
     * hold the same local port toward another peer.
     */
    const timerOf = (socket: net.Socket) => {
      const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
      const [local, remote] = [hex(socket.localPort!), hex(socket.remotePort!)];
      for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
        for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
          const fields = line.trim().split(/\s+/);
          if (fields[1]?.endsWith(`:${local}`) && fields[2]?.endsWith(`:${remote}`) && fields[3] === '01') {
            return Number.parseInt(fields[5]!.split(':')[0]!, 16);
          }
        }
      }
      throw new Error(`no established socket from local port ${socket.localPort} to port ${socket.remotePort}`);
    };
    const knex = createKnex(db.connectionString, 1, 'treasury-probe');
    const plain = new pg.Client({ connectionString: db.connectionString });
    await plain.connect();
    const raw = (await knex.client.acquireRawConnection()) as pg.Client & { connection: { stream: net.Socket } };
    try {
      assert.equal(timerOf(raw.connection.stream), 2, 'keepalive timer armed');
      const plainSocket = (plain as unknown as { connection: { stream: net.Socket } }).connection.stream;
      assert.equal(timerOf(plainSocket), 0, 'no timer on a socket without keepalive');
    } finally {
      await knex.client.destroyRawConnection(raw);
      await plain.end();
      await knex.destroy();
    }
  });
});
