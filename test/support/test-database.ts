/**
 * Real PostgreSQL for tests. TEST_DATABASE_URL (a server-level URL whose user may CREATE DATABASE) is used
 * when set; otherwise one embedded PostgreSQL is started per test run in a temporary directory by mocha's
 * global setup, which hands it to the parallel workers through TEST_DATABASE_URL and stops it at the end
 * (./root-hooks.ts); a process running suites without that setup starts its own on first use. Every suite
 * gets its own database, already migrated.
 *
 * Migrating is the slow part (every migration in migrations/, each its own transaction), so it happens once
 * per server: into a template database named by a hash of migrations/ (file names and contents), which every
 * suite then clones with `CREATE DATABASE … TEMPLATE` (a copy of its files, no SQL replayed). A changed,
 * added or removed migration names a new template, so a stale one is never cloned. The template is built
 * under a temporary name and renamed when complete, so a run that dies half-way leaves no template that
 * looks finished, and two runs building it at once on a shared TEST_DATABASE_URL server both end up with the
 * one that won the rename. It takes no connections (ALLOW_CONNECTIONS false): PostgreSQL refuses to clone a
 * database someone is connected to. Migrations must not import code from outside migrations/ (they do not),
 * or the hash would miss a change in it.
 *
 * What this does not do: drop the templates of older migration sets on a TEST_DATABASE_URL server (another
 * checkout may be using them); `DROP DATABASE` them by hand (`treasury_template_…`, after `ALTER DATABASE …
 * IS_TEMPLATE false`).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  createKnex,
  listPendingMigrations,
  migrateLatest,
  MIGRATIONS_DIR,
  type Knex,
} from '../../src/api/db/knex-client.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/api/db/embedded-postgres.js';
import { freeLoopbackPort as freePort } from '../../ops/net/free-loopback-port.js';
import { lateBound } from './late-bound.js';

let server: Promise<{ urlFor(db: string): string; stop(): Promise<void> }> | undefined;
/** The migrated template on `server`, once asked for. */
let template: Promise<string> | undefined;

/** How long databases took to make in this process: printed by the root hook (./root-hooks.ts) at the end. */
export const databaseTimings = {
  templateMs: undefined as number | undefined,
  migrations: 0,
  lostRace: false,
  clones: 0,
  cloneMs: 0,
  empty: 0,
};

export { freePort };

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
    const handle: EmbeddedPostgresHandle = await startEmbeddedPostgres({
      dir,
      port: await freePort(),
      database: 'postgres',
      // Every parallel worker's suites share this one server (shareTestPostgres).
      settings: { max_connections: '400' },
    });
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

/**
 * Starts the run's server and builds its template in this process, and hands both to every test process
 * started after it (mocha's parallel workers) through TEST_DATABASE_URL: one PostgreSQL and one set of
 * migrations per run, however many workers. Called by the global setup (./root-hooks.ts).
 */
export async function shareTestPostgres(): Promise<void> {
  const srv = await testPostgres();
  await (template ??= buildTemplate(srv));
  process.env.TEST_DATABASE_URL ??= srv.urlFor('postgres');
}

export async function stopTestPostgres(): Promise<void> {
  if (!server) return;
  const s = await server;
  server = undefined;
  template = undefined;
  await s.stop();
}

const TEMPLATE_PREFIX = 'treasury_template_';

/** A name for the template of the migrations as they are on disk: 16 hex digits of their SHA-256. */
function templateName(): { name: string; count: number } {
  const hash = createHash('sha256');
  const files = fs.readdirSync(MIGRATIONS_DIR).sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(fs.readFileSync(path.join(MIGRATIONS_DIR, file)));
    hash.update('\0');
  }
  return { name: `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 16)}`, count: files.length };
}

async function withAdmin<T>(srv: { urlFor(db: string): string }, run: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: srv.urlFor('postgres'), application_name: 'treasury-test' });
  await admin.connect();
  try {
    return await run(admin);
  } finally {
    await admin.end();
  }
}

async function dropTemplate(admin: pg.Client, name: string): Promise<void> {
  await admin.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE false ALLOW_CONNECTIONS true`);
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/** The migrated template's name, building it first when the server has none for today's migrations. */
async function buildTemplate(srv: { urlFor(db: string): string }): Promise<string> {
  const { name, count } = templateName();
  const started = performance.now();
  await withAdmin(srv, async (admin) => {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return;
    const building = `${name}_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${building}`);
    try {
      const knex = createKnex(srv.urlFor(building), 1, 'treasury-test-template');
      try {
        await migrateLatest(knex);
      } finally {
        await knex.destroy();
      }
      // No session may stay connected to a template: PostgreSQL refuses to clone a database in use.
      await admin.query(`ALTER DATABASE ${building} WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`);
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      databaseTimings.migrations = count;
    } catch (err) {
      await dropTemplate(admin, building).catch(() => undefined);
      // Another run finished the same template first (duplicate_database): use theirs.
      if ((err as { code?: string }).code !== '42P04') throw err;
      databaseTimings.lostRace = true;
    }
  });
  databaseTimings.templateMs = performance.now() - started;
  return name;
}

export interface TestDatabase {
  name: string;
  connectionString: string;
  knex: Knex;
  drop(): Promise<void>;
}

/**
 * A new database: a clone of the migrated template, or empty with `migrate: false` (for tests that run
 * migrations themselves).
 */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const srv = await testPostgres();
  const name = `t_${randomBytes(6).toString('hex')}`;
  if (options.migrate === false) {
    await withAdmin(srv, (admin) => admin.query(`CREATE DATABASE ${name}`));
    databaseTimings.empty++;
  } else {
    const source = await (template ??= buildTemplate(srv));
    const started = performance.now();
    await withAdmin(srv, (admin) => admin.query(`CREATE DATABASE ${name} TEMPLATE ${source}`));
    databaseTimings.cloneMs += performance.now() - started;
    databaseTimings.clones++;
  }
  const connectionString = srv.urlFor(name);
  const knex = createKnex(connectionString, 20, 'treasury-test');
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

/** The signer's own database (signer/owner-policy/), as a deployment gives it: its own role and database. */
export interface SignerDatabase {
  /** The URL the signer is given (TREASURY_SIGNER_DATABASE_URL): its own role, which owns the database. */
  connectionString: string;
  /** The role's name: no other role (the API's test databases' included) may connect to the database. */
  role: string;
  drop(): Promise<void>;
}

/**
 * An empty database for a signer's policy store, owned by a role of its own with a password only the signer
 * is given; PUBLIC may not connect to it. The signer migrates it itself at start.
 */
export async function createSignerDatabase(): Promise<SignerDatabase> {
  const srv = await testPostgres();
  const suffix = randomBytes(6).toString('hex');
  const role = `signer_${suffix}`;
  const name = `s_${suffix}`;
  const password = randomBytes(18).toString('hex');
  await withAdmin(srv, async (admin) => {
    await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${password}'`);
    await admin.query(`CREATE DATABASE ${name} OWNER ${role}`);
    await admin.query(`REVOKE ALL ON DATABASE ${name} FROM PUBLIC`);
  });
  const url = new URL(srv.urlFor(name));
  url.username = role;
  url.password = password;
  return {
    connectionString: url.toString(),
    role,
    async drop() {
      await withAdmin(srv, async (admin) => {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.query(`DROP ROLE IF EXISTS ${role}`);
      });
    },
  };
}

/**
 * Mocha hooks for the describe block it is called in: a fresh migrated database (a clone of the template)
 * before its tests (handed to `set`), dropped after them; with `migrate: false`, an empty one.
 */
export function useTestDatabase(set: (db: TestDatabase) => void, options: { migrate?: boolean } = {}): void {
  let db: TestDatabase | undefined;
  before(async () => {
    db = await createTestDatabase(options);
    set(db);
  });
  after(async () => {
    await db?.drop();
  });
}

/**
 * Runs, one at a time, every pending migration before `migration` (a file name in migrations/), leaving it
 * the next one: for tests of a migration on a database that holds what came before it.
 */
export async function migrateUpTo(knex: Knex, migration: string): Promise<void> {
  for (;;) {
    const pending = await listPendingMigrations(knex);
    if (pending[0] === migration) return;
    assert.ok(pending.length > 0, `${migration} not found among the pending migrations`);
    await knex.migrate.up();
  }
}

/**
 * For the tests of one migration: an empty database of the enclosing suite (useTestDatabase, `migrate:
 * false`) on which every migration before `migration` has run when its tests start (migrateUpTo). The handle
 * reads through to it (./late-bound.ts).
 */
export function useTestDatabaseBefore(migration: string): TestDatabase {
  let db: TestDatabase | undefined;
  useTestDatabase((d) => (db = d), { migrate: false });
  before(async () => {
    await migrateUpTo(db!.knex, migration);
  });
  return lateBound(() => db, `the database before ${migration}`);
}
