/**
 * compose.yaml's PostgreSQL roles (ops/compose/postgres-init/), run for real: the very script the postgres image's
 * entrypoint runs, through psql, as the bootstrap superuser `postgres` of a server of the suite's own (the image's
 * layout), then used as the services use them:
 *  - the API's role `treasury` is no superuser, cannot connect to the signer's database, and migrates its own
 *    database with every migration in migrations/ (none needs more than an owner may do);
 *  - the signer's role `treasury_signer` is no superuser, cannot connect to the API's database, and sets up its
 *    policy store (signer/owner-policy/signer-store-schema.ts) through the signer's own start-up path — whose
 *    placement check (signer/owner-policy/store-placement.ts) finds no other role able to reach it, in production
 *    mode too;
 *  - without a password in the environment the script stops, naming the variable, before anything is made.
 * Skipped, saying why, where psql 15 or later is not installed (`apt-get install -y postgresql-client`).
 * What this cannot show: the image's entrypoint itself (that needs a container engine).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createKnex, listPendingMigrations, migrateLatest } from '../../../src/api/db/knex-client.js';
import { PgOwnerPolicyStore } from '../../../signer/owner-policy/pg-owner-policy-store.js';
import { checkStorePlacement } from '../../../signer/owner-policy/store-placement.js';
import type { StoreLog } from '../../../signer/owner-policy/store-generation.js';
import { startPrivatePostgres, type PrivatePostgres } from '../signer/private-postgres.js';

/** Placement rules outside production mode: other roles are warned of, never refused. */
const DEVELOPMENT_PLACEMENT = { production: false, acceptedRoles: [] };

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');
const SCRIPT = path.join(ROOT, 'ops/compose/postgres-init/10-treasury-roles.sh');
const PASSWORDS = { TREASURY_DB_PASSWORD: 'api-db-secret-1', TREASURY_SIGNER_DB_PASSWORD: 'signer-db-secret-2' };

/** psql's major version, or undefined when it is not installed. */
async function psqlMajor(): Promise<number | undefined> {
  const found = await run('psql', ['--version']).then(
    (r) => r.stdout,
    () => undefined,
  );
  const major = found === undefined ? undefined : /\(PostgreSQL\) (\d+)/.exec(found)?.[1];
  return major === undefined ? undefined : Number(major);
}

/** Connects as `role` to `db` and ends; rejects as PostgreSQL refused. */
async function connectAs(server: PrivatePostgres, db: string, role: string, password: string): Promise<void> {
  const client = new pg.Client({ connectionString: server.urlFor(db, role, password) });
  await client.connect();
  await client.end();
}

describe("compose.yaml's PostgreSQL roles (ops/compose/postgres-init/, run through psql)", function () {
  this.timeout(180_000);
  let server: PrivatePostgres;
  /** Runs the init script as the entrypoint would, over loopback instead of the socket. */
  const runInit = (env: Record<string, string>) =>
    run('bash', [SCRIPT], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        POSTGRES_USER: server.superuser,
        PGHOST: '127.0.0.1',
        PGPORT: String(server.port),
        PGPASSWORD: server.superuserPassword,
        ...env,
      },
    });
  const roleCount = () =>
    server.asSuperuser(async (c) => {
      const { rows } = await c.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_roles WHERE rolname IN ('treasury', 'treasury_signer')",
      );
      return rows[0]!.n;
    });

  before(async function () {
    const major = await psqlMajor();
    if (major === undefined || major < 15) {
      console.log(
        `    skipped: ${major === undefined ? 'psql is not installed' : `psql ${major} has no \\getenv`} (apt-get install -y postgresql-client)`,
      );
      this.skip();
    }
    server = await startPrivatePostgres('postgres');
  });
  after(async () => {
    await server?.stop();
  });

  it('stops without a password in the environment, naming the variable, before anything is made', async () => {
    await assert.rejects(
      runInit({ TREASURY_DB_PASSWORD: PASSWORDS.TREASURY_DB_PASSWORD }),
      (err: { stderr?: string }) => /TREASURY_SIGNER_DB_PASSWORD/.test(err.stderr ?? ''),
    );
    await assert.rejects(runInit({}), (err: { stderr?: string }) => /TREASURY_DB_PASSWORD/.test(err.stderr ?? ''));
    assert.equal(await roleCount(), 0);
  });

  it('makes two roles, neither a superuser, each the owner of its own database only', async () => {
    const { stderr } = await runInit(PASSWORDS);
    assert.ok(
      !stderr.includes(PASSWORDS.TREASURY_DB_PASSWORD) && !stderr.includes(PASSWORDS.TREASURY_SIGNER_DB_PASSWORD),
    );
    const roles = await server.asSuperuser(
      async (c) =>
        (
          await c.query(
            `SELECT r.rolname, r.rolsuper, r.rolcreatedb, r.rolcreaterole, r.rolreplication, r.rolbypassrls,
                    (SELECT array_agg(d.datname::text ORDER BY d.datname) FROM pg_database d WHERE d.datdba = r.oid) AS owns
               FROM pg_roles r WHERE r.rolname IN ('treasury', 'treasury_signer') ORDER BY r.rolname`,
          )
        ).rows,
    );
    const plain = {
      rolsuper: false,
      rolcreatedb: false,
      rolcreaterole: false,
      rolreplication: false,
      rolbypassrls: false,
    };
    assert.deepEqual(roles, [
      { rolname: 'treasury', ...plain, owns: ['treasury'] },
      { rolname: 'treasury_signer', ...plain, owns: ['treasury_signer'] },
    ]);
  });

  it("the API's role cannot connect to the signer's database, nor the signer's to the API's", async () => {
    const denied = (err: { code?: string }) => err.code === '42501';
    await assert.rejects(
      connectAs(server, 'treasury_signer', 'treasury', PASSWORDS.TREASURY_DB_PASSWORD),
      denied,
      "the API's role reached the signer's store",
    );
    await assert.rejects(
      connectAs(server, 'treasury', 'treasury_signer', PASSWORDS.TREASURY_SIGNER_DB_PASSWORD),
      denied,
      "the signer's role reached the API's database",
    );
    // Each reaches its own.
    await connectAs(server, 'treasury', 'treasury', PASSWORDS.TREASURY_DB_PASSWORD);
    await connectAs(server, 'treasury_signer', 'treasury_signer', PASSWORDS.TREASURY_SIGNER_DB_PASSWORD);
  });

  it("migrates the API's database as the API's role: every migration, none needing a superuser", async () => {
    const knex = createKnex(server.urlFor('treasury', 'treasury', PASSWORDS.TREASURY_DB_PASSWORD), 1, 'treasury-test');
    try {
      await migrateLatest(knex);
      assert.deepEqual(await listPendingMigrations(knex), []);
      const { rows } = await knex.raw<{ rows: Array<{ owner: string; n: number }> }>(
        `SELECT tableowner AS owner, count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' GROUP BY 1`,
      );
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.owner, 'treasury');
      assert.ok(rows[0]!.n > 10, `${rows[0]!.n} tables`);
    } finally {
      await knex.destroy();
    }
  });

  it("sets up the signer's policy store as the signer's role; the placement check finds no other role, in production mode too", async () => {
    const warned: Array<Record<string, unknown>> = [];
    const log: StoreLog = { warn: (fields) => warned.push(fields), error: (fields) => warned.push(fields) };
    const connectionString = server.urlFor('treasury_signer', 'treasury_signer', PASSWORDS.TREASURY_SIGNER_DB_PASSWORD);
    const store = new PgOwnerPolicyStore({
      connectionString,
      poolMax: 1,
      openSpendLeaseMs: 0,
      lookBackSeconds: 60,
      log,
      placement: DEVELOPMENT_PLACEMENT,
    });
    try {
      await store.prepare();
    } finally {
      await store.close();
    }
    assert.deepEqual(warned, []);
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      const { rows } = await client.query<{ owner: string; n: number }>(
        `SELECT tableowner AS owner, count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' GROUP BY 1`,
      );
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.owner, 'treasury_signer');
      assert.ok(rows[0]!.n >= 7, `${rows[0]!.n} tables`);
      // Once its tables exist, as a production signer checks them at its next start: still nobody else.
      await checkStorePlacement(client, log, { production: true, acceptedRoles: [] });
      assert.deepEqual(warned, []);
    } finally {
      await client.end();
    }
  });
});
