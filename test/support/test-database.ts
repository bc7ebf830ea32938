/**
 * Real PostgreSQL for tests. TEST_DATABASE_URL (a server-level URL whose user may CREATE DATABASE) is used
 * when set; otherwise one embedded PostgreSQL is started per test run under .treasury/test-pg and stopped
 * by the root hook. Every suite gets its own freshly migrated database.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createKnex, migrateLatest, type Knex } from '../../src/api/db/knex-client.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/api/db/embedded-postgres.js';

let server: Promise<{ urlFor(db: string): string; stop(): Promise<void> }> | undefined;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function startServer(): Promise<{ urlFor(db: string): string; stop(): Promise<void> }> {
  const external = process.env.TEST_DATABASE_URL;
  if (external) {
    return Promise.resolve({
      urlFor: (db: string) => {
        const u = new URL(external);
        u.pathname = `/${db}`;
        return u.toString();
      },
      stop: async () => undefined,
    });
  }
  return (async () => {
    // One server per test run in its own directory, so concurrent runs on one machine never share a cluster.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-test-pg-'));
    fs.chmodSync(dir, 0o755);
    const handle: EmbeddedPostgresHandle = await startEmbeddedPostgres({ dir, port: await freePort(), database: 'postgres' });
    return {
      urlFor: (db: string) => handle.connectionStringFor(db),
      stop: async () => {
        await handle.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  })();
}

export function testPostgres() {
  server ??= startServer();
  return server;
}

export async function stopTestPostgres(): Promise<void> {
  if (!server) return;
  const s = await server;
  server = undefined;
  await s.stop();
}

export interface TestDatabase {
  name: string;
  connectionString: string;
  knex: Knex;
  drop(): Promise<void>;
}

/** A new empty database; migrated unless `migrate: false`. */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const srv = await testPostgres();
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client(srv.urlFor('postgres'));
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const connectionString = srv.urlFor(name);
  const knex = createKnex(connectionString, 20, 'treasury-test');
  if (options.migrate !== false) await migrateLatest(knex);
  return {
    name,
    connectionString,
    knex,
    async drop() {
      await knex.destroy();
      const c = new pg.Client(srv.urlFor('postgres'));
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * Mocha hooks for the describe block it is called in: a fresh migrated database before its tests (handed to
 * `set`), dropped after them.
 */
export function useTestDatabase(set: (db: TestDatabase) => void): void {
  let db: TestDatabase | undefined;
  before(async () => {
    db = await createTestDatabase();
    set(db);
  });
  after(async () => {
    await db?.drop();
  });
}
