/**
 * Who else can reach the signer's policy store (signer/owner-policy/store-placement.ts), on real PostgreSQL — a server
 * of the suite's own: the roles made here (another superuser, a member of pg_write_all_data) would be seen from every
 * other suite's store on the run's shared server:
 *  - nothing is reported for a store only its role reaches, the bootstrap superuser and roles that may not connect
 *    left out (nor for a role that may connect and do nothing more);
 *  - each way in is reported by its code: another superuser (or a member of one), a member of the signer's role,
 *    CREATE on the store's database or on its schema, a write privilege on a store table, pg_write_all_data;
 *  - outside production mode each is a warning; in production mode the start is refused
 *    (`store_reachable_by_other_roles`) unless TREASURY_SIGNER_ACCEPT_STORE_ROLES names every such role — through
 *    the real signer process too: exit 1, one fatal line naming the role and the variable, never `signer ready`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PgOwnerPolicyStore } from '../../../signer/owner-policy/pg-owner-policy-store.js';
import type { StoreLog } from '../../../signer/owner-policy/store-generation.js';
import {
  checkStorePlacement,
  otherStoreRoles,
  StorePlacementError,
  type OtherRole,
} from '../../../signer/owner-policy/store-placement.js';
import { startTestSigner } from '../../support/signer-harness.js';
import type { SignerDatabase } from '../../support/test-database.js';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';

/** Placement rules outside production mode: other roles are warned of, never refused. */
const DEVELOPMENT_PLACEMENT = { production: false, acceptedRoles: [] };

const STORE_DB = 'signer_store';
const SIGNER_ROLE = 'signer_own';
/** Production mode with its token list named (USDC on Base Sepolia). */
const PRODUCTION = {
  NODE_ENV: 'production',
  TREASURY_SIGNER_ALLOWED_TOKENS: '84532:0x036CbD53842c5426634e7929541eC2318f3dCF7e',
};

/** A log that keeps its warnings' fields. */
function keptLog() {
  const warned: Array<Record<string, unknown>> = [];
  const log: StoreLog = { warn: (fields) => warned.push(fields), error: (fields) => warned.push(fields) };
  return { log, warned };
}

describe('who else can reach the signer store (store-placement.ts, a PostgreSQL of its own)', function () {
  this.timeout(180_000);
  let server: PrivatePostgres;
  let signerPassword: string;
  let store: pg.Client;
  const otherPassword = randomBytes(12).toString('hex');

  /** Runs statements as the superuser on `db`. */
  const admin = (sql: string, db = 'postgres') => server.asSuperuser((c) => c.query(sql), db);
  /** A login role `name`, made with `attributes`, then `grants` (run in the store's database); dropped by `drop`. */
  const makeRole = async (name: string, attributes: string, grants = '') => {
    await admin(`CREATE ROLE ${name} LOGIN ${attributes} PASSWORD '${otherPassword}'`);
    if (grants) await admin(grants, STORE_DB);
  };
  const drop = async (...names: string[]) => {
    for (const name of names) {
      await admin(`DROP OWNED BY ${name}`, STORE_DB);
      await admin(`DROP ROLE ${name}`);
    }
  };
  const found = async (): Promise<OtherRole[]> => (await otherStoreRoles(store)).others;

  before(async () => {
    server = await startPrivatePostgres('postgres');
    signerPassword = randomBytes(12).toString('hex');
    // The store as a deployment makes it (ops/compose/postgres-init/): its own role and database, PUBLIC kept out.
    await admin(`CREATE ROLE ${SIGNER_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${signerPassword}'`);
    await admin(`CREATE DATABASE ${STORE_DB} OWNER ${SIGNER_ROLE}`);
    await admin(`REVOKE ALL ON DATABASE ${STORE_DB} FROM PUBLIC`);
    const { log, warned } = keptLog();
    const prepared = new PgOwnerPolicyStore({
      connectionString: server.urlFor(STORE_DB, SIGNER_ROLE, signerPassword),
      poolMax: 1,
      openSpendLeaseMs: 0,
      lookBackSeconds: 60,
      log,
      placement: DEVELOPMENT_PLACEMENT,
    });
    await prepared.prepare().finally(() => prepared.close());
    assert.deepEqual(warned, [], 'a store only its role reaches starts without a word');
    store = new pg.Client({ connectionString: server.urlFor(STORE_DB, SIGNER_ROLE, signerPassword) });
    await store.connect();
  });
  after(async () => {
    await store?.end();
    await server?.stop();
  });

  it('reports nothing for roles that may not connect, or may connect and do nothing more; never the bootstrap superuser', async () => {
    // The API's role of a deployment: a login role of the same server, no CONNECT on the store's database.
    await makeRole('api_like', 'NOSUPERUSER', `GRANT SELECT ON signer_wallets TO api_like`);
    await makeRole('reader', 'NOSUPERUSER', `GRANT CONNECT ON DATABASE ${STORE_DB} TO reader`);
    try {
      assert.deepEqual(await found(), []);
    } finally {
      await drop('api_like', 'reader');
    }
  });

  it('reports another superuser, and a role that may become one', async () => {
    await makeRole('other_admin', 'SUPERUSER');
    await admin('CREATE ROLE admins NOLOGIN SUPERUSER');
    await makeRole('in_admins', 'NOSUPERUSER', 'GRANT admins TO in_admins');
    try {
      assert.deepEqual(await found(), [
        { role: 'in_admins', reaches: ['superuser'] },
        { role: 'other_admin', reaches: ['superuser'] },
      ]);
    } finally {
      await drop('other_admin', 'in_admins', 'admins');
    }
  });

  it("reports a member of the signer's role, CREATE on the database or its schema, a write on a store table, pg_write_all_data", async () => {
    const connect = (role: string) => `GRANT CONNECT ON DATABASE ${STORE_DB} TO ${role};`;
    await makeRole('member', 'NOSUPERUSER', `GRANT ${SIGNER_ROLE} TO member`);
    await makeRole(
      'schema_maker',
      'NOSUPERUSER',
      `${connect('schema_maker')} GRANT CREATE ON DATABASE ${STORE_DB} TO schema_maker`,
    );
    await makeRole(
      'object_maker',
      'NOSUPERUSER',
      `${connect('object_maker')} GRANT CREATE ON SCHEMA public TO object_maker`,
    );
    await makeRole('writer', 'NOSUPERUSER', `${connect('writer')} GRANT INSERT ON signer_spends TO writer`);
    await makeRole('writes_all', 'NOSUPERUSER', `${connect('writes_all')} GRANT pg_write_all_data TO writes_all`);
    try {
      const reported = new Map((await found()).map((o) => [o.role, o.reaches]));
      assert.deepEqual([...reported.keys()], ['member', 'object_maker', 'schema_maker', 'writer', 'writes_all']);
      // A member may do what the signer's role does: each of its ways in is reported.
      assert.ok(reported.get('member')!.includes('signer_role'), String(reported.get('member')));
      assert.deepEqual(reported.get('schema_maker'), ['database_create']);
      assert.deepEqual(reported.get('object_maker'), ['schema_create']);
      assert.deepEqual(reported.get('writer'), ['store_objects']);
      assert.deepEqual(reported.get('writes_all'), ['store_objects', 'write_all_data']);
    } finally {
      await drop('member', 'schema_maker', 'object_maker', 'writer', 'writes_all');
    }
    assert.deepEqual(await found(), [], 'their access taken away, nothing is reported');
  });

  it('warns outside production mode; refuses in production mode unless each role is accepted by name', async () => {
    await makeRole(
      'writer',
      'NOSUPERUSER',
      `GRANT CONNECT ON DATABASE ${STORE_DB} TO writer; GRANT UPDATE ON signer_wallets TO writer`,
    );
    await makeRole('other_admin', 'SUPERUSER');
    try {
      const outside = keptLog();
      await checkStorePlacement(store, outside.log, { production: false, acceptedRoles: [] });
      assert.deepEqual(
        outside.warned.map((w) => [w.event, (w.others as OtherRole[]).map((o) => o.role)]),
        [['store_reachable_by_other_roles', ['other_admin', 'writer']]],
      );

      const refusedLog = keptLog();
      const refused = await checkStorePlacement(store, refusedLog.log, { production: true, acceptedRoles: ['writer'] })
        .then(() => assert.fail('started with a superuser it was not told of'))
        .catch((err: unknown) => err);
      assert.ok(refused instanceof StorePlacementError, String(refused));
      assert.equal(refused.code, 'store_reachable_by_other_roles');
      assert.deepEqual(refused.details, {
        database: STORE_DB,
        role: SIGNER_ROLE,
        others: [{ role: 'other_admin', reaches: ['superuser'] }],
      });
      assert.match(refused.message, /other_admin: superuser/);
      assert.match(refused.message, /TREASURY_SIGNER_ACCEPT_STORE_ROLES/);
      assert.equal(refusedLog.warned.length, 1, 'warned of before the refusal');

      const accepted = keptLog();
      await checkStorePlacement(store, accepted.log, { production: true, acceptedRoles: ['writer', 'other_admin'] });
      assert.deepEqual(accepted.warned[0]?.accepted, ['other_admin', 'writer']);
    } finally {
      await drop('writer', 'other_admin');
    }
  });

  describe('through the real signer process in production mode', () => {
    let dir: string;
    let policyStore: SignerDatabase;
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-store-roles-'));
      policyStore = {
        connectionString: server.urlFor(STORE_DB, SIGNER_ROLE, signerPassword),
        role: SIGNER_ROLE,
        drop: () => Promise.resolve(),
      };
      await makeRole('other_admin', 'SUPERUSER');
    });
    after(async () => {
      await drop('other_admin');
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const env = (extra: Record<string, string> = {}) => ({
      ...PRODUCTION,
      TREASURY_SIGNER_STORE_WATERMARK_FILE: path.join(dir, 'store-watermark.json'),
      ...extra,
    });

    it('refuses to start while another superuser can reach the store: exit 1, one fatal line naming it', async () => {
      const message = await startTestSigner({ keyBackend: 'pkcs11', policyStore, env: env() }).then(
        async (signer) => {
          const logs = signer.logs();
          await signer.stop();
          return `the signer started:\n${logs}`;
        },
        (err: unknown) => (err as Error).message,
      );
      assert.match(message, /^signer exited with 1 before ready:\n/);
      assert.ok(!message.includes('signer ready'));
      const lines = message.split('\n').slice(1).filter(Boolean);
      const fatal = JSON.parse(lines.at(-1)!) as { msg: string; err: string };
      assert.equal(fatal.msg, 'signer failed to start');
      assert.match(fatal.err, /can be reached by roles other than its own \(other_admin: superuser\)/);
      assert.match(fatal.err, /TREASURY_SIGNER_ACCEPT_STORE_ROLES/);
      assert.ok(!message.includes(signerPassword), 'the password is never printed');
    });

    it('starts when TREASURY_SIGNER_ACCEPT_STORE_ROLES names the role, and says so', async () => {
      const signer = await startTestSigner({
        keyBackend: 'pkcs11',
        policyStore,
        env: env({ TREASURY_SIGNER_ACCEPT_STORE_ROLES: 'other_admin' }),
      });
      try {
        assert.match(signer.logs(), /"event":"store_reachable_by_other_roles"/);
        assert.match(signer.logs(), /"accepted":\["other_admin"\]/);
        assert.match(signer.logs(), /"owner_policies":"on"/);
      } finally {
        assert.equal(await signer.stop(), 0);
      }
    });
  });
});
