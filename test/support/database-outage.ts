/**
 * PostgreSQL out of reach for one test database, driven from a second connection (to the server's
 * `postgres` database): `refuse` closes the database to new connections and ends every session on it (the
 * pool's and the writers'), `allow` opens it again, `close` opens it again (best effort) and ends that
 * connection. For the tests of what the API answers while its database is gone; it does not stop the server.
 */
import pg from 'pg';
import { startTestTreasury, type TestTreasury } from './api-harness.js';
import { lateBound } from './late-bound.js';
import type { TestDatabase } from './test-database.js';

export interface DatabaseGate {
  refuse(): Promise<void>;
  allow(): Promise<void>;
  close(): Promise<void>;
}

export async function openDatabaseGate(db: Pick<TestDatabase, 'name' | 'connectionString'>): Promise<DatabaseGate> {
  const url = new URL(db.connectionString);
  url.pathname = '/postgres';
  const admin = new pg.Client(url.toString());
  await admin.connect();
  return {
    async refuse() {
      await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [db.name]);
    },
    async allow() {
      await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
    },
    async close() {
      await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`).catch(() => undefined);
      await admin.end();
    },
  };
}

/**
 * A test treasury and a gate on its database for the enclosing mocha suite: both made in a `before` hook,
 * and in an `after` hook the gate is opened and closed before the treasury stops. The handles read through
 * to them (./late-bound.ts).
 */
export function useGatedTestTreasury(options?: Parameters<typeof startTestTreasury>[0]): {
  t: TestTreasury;
  gate: DatabaseGate;
} {
  let t: TestTreasury | undefined;
  let gate: DatabaseGate | undefined;
  before(async () => {
    t = await startTestTreasury(options);
    gate = await openDatabaseGate(t.db);
  });
  after(async () => {
    await gate?.close();
    await t?.stop();
  });
  return { t: lateBound(() => t, 'the test treasury'), gate: lateBound(() => gate, 'the database gate') };
}
