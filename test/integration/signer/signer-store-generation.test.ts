/**
 * The store's generation and placement, in process (signer/owner-policy/store-generation.ts, store-placement.ts):
 *  - a store restored, while the signer runs, to a copy from before the account existed: the next trust-binding
 *    write — another key signing the wallet's first policy, an account recorded — is refused
 *    `policy_store_unavailable` (rule `store_rolled_back`) and logged, and nothing is bound;
 *  - a database holding the API's tables is refused before anything is migrated into it; a superuser role is
 *    warned of.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { OwnerPolicies } from '../../../signer/owner-policy/owner-policies.js';
import { PgOwnerPolicyStore } from '../../../signer/owner-policy/pg-owner-policy-store.js';
import type { StoreLog } from '../../../signer/owner-policy/store-generation.js';
import { StorePlacementError } from '../../../signer/owner-policy/store-placement.js';
import { SignerFault } from '../../../signer/signer-error.js';
import { createSignerDatabase, testPostgres } from '../../support/test-database.js';
import {
  DEVELOPMENT_PLACEMENT,
  ownerAuthority,
  signedPolicy,
  signerPolicyStore,
  storeGeneration,
  storeSnapshots,
} from './signer-test-helpers.js';

/** A log that keeps what it was told. */
function keptLog() {
  const lines: Array<{ level: 'warn' | 'error'; fields: Record<string, unknown>; message: string }> = [];
  const log: StoreLog = {
    warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
    error: (fields, message) => lines.push({ level: 'error', fields, message }),
  };
  return { log, lines };
}

async function query(connectionString: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

describe("the signer store's generation and placement", function () {
  this.timeout(120_000);

  it('refuses every trust-binding write once the store went back under what the process saw; nothing is bound', async () => {
    const db = await createSignerDatabase();
    const snapshots = storeSnapshots(db);
    const { log, lines } = keptLog();
    const owner = privateKeyToAccount(generatePrivateKey());
    const intruder = privateKeyToAccount(generatePrivateKey());
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const store = new PgOwnerPolicyStore({
      connectionString: db.connectionString,
      poolMax: 2,
      openSpendLeaseMs: 0,
      lookBackSeconds: 60,
      log,
      placement: DEVELOPMENT_PLACEMENT,
    });
    try {
      const first = signerPolicyStore(db.connectionString);
      await first.prepare();
      await first.close();
      const empty = await snapshots.take();

      await store.prepare();
      const policies = new OwnerPolicies({ store, approver: null });
      const granted = await policies.accountAuthority(await ownerAuthority(owner));
      await policies.recordAccount('acct-1', granted.authority, granted.proof);
      await policies.recordWallet(wallet, 'acct-1');
      await policies.set(await signedPolicy(owner, wallet, { per_tx_cap_usd: '1' }, 1), Date.now() / 1000);

      await snapshots.restore(empty);
      // The pool's connections to the store were ended: the first call may meet one (also policy_store_unavailable).
      let refused: SignerFault | undefined;
      for (let i = 0; i < 5 && refused?.details.rule !== 'store_rolled_back'; i++) {
        refused = await policies
          .set(await signedPolicy(intruder, wallet, { allow_key_destruction: true } as never, 1), Date.now() / 1000)
          .then(
            () => assert.fail('a first signer was bound on a rolled-back store'),
            (err: SignerFault) => err,
          );
        assert.equal(refused.code, 'policy_store_unavailable');
      }
      assert.equal(refused?.details.rule, 'store_rolled_back');
      assert.match(refused!.message, /older than this signer has seen \(generation 0, seen 3\)/);
      await assert.rejects(
        policies.recordAccount('acct-2', granted.authority, granted.proof),
        (err: SignerFault) => err.code === 'policy_store_unavailable' && err.details.rule === 'store_rolled_back',
      );
      // A payment's adoption never fails the payment, and binds nothing either.
      await policies.adoptWallet(wallet, 'acct-1');

      const held = await query(
        db.connectionString,
        `SELECT (SELECT count(*) FROM signer_wallets)::int AS wallets, (SELECT count(*) FROM signer_accounts)::int AS accounts,
                (SELECT count(*) FROM signer_policy_history)::int AS policies`,
      );
      assert.deepEqual(held.rows[0], { wallets: 0, accounts: 0, policies: 0 });
      assert.equal(await storeGeneration(db), 0);
      const logged = lines.filter((l) => l.fields.event === 'store_rolled_back');
      assert.ok(logged.length >= 2 && logged.every((l) => l.level === 'error'), JSON.stringify(lines));
      assert.deepEqual(
        { store: logged[0]!.fields.store_generation, seen: logged[0]!.fields.seen_generation },
        { store: 0, seen: 3 },
      );
    } finally {
      await store.close();
      await snapshots.drop();
      await db.drop();
    }
  });

  it("refuses to migrate into a database holding the API's tables; warns of a superuser role", async () => {
    const db = await createSignerDatabase();
    try {
      await query(
        db.connectionString,
        'CREATE TABLE knex_migrations (id int); CREATE TABLE treasury_accounts (id int)',
      );
      const store = signerPolicyStore(db.connectionString);
      await assert.rejects(
        store.prepare().finally(() => store.close()),
        (err: unknown) =>
          err instanceof StorePlacementError &&
          /holds the API's tables: the signer's policy store must be a database of its own/.test(err.message),
      );
      const migrated = await query(db.connectionString, "SELECT to_regclass('signer_migrations') AS t");
      assert.equal(migrated.rows[0].t, null);
    } finally {
      await db.drop();
    }

    const other = await createSignerDatabase();
    try {
      const { log, lines } = keptLog();
      const asSuperuser = (await testPostgres()).urlFor(new URL(other.connectionString).pathname.slice(1));
      const store = new PgOwnerPolicyStore({
        connectionString: asSuperuser,
        poolMax: 1,
        openSpendLeaseMs: 0,
        lookBackSeconds: 60,
        log,
        placement: DEVELOPMENT_PLACEMENT,
      });
      await store.prepare().finally(() => store.close());
      // Connected as a superuser to a database another role owns: both are reported (the owner may write the store).
      assert.deepEqual(
        lines.map((l) => [l.level, l.fields.event]),
        [
          ['warn', 'store_role_superuser'],
          ['warn', 'store_reachable_by_other_roles'],
        ],
      );
      assert.deepEqual(lines[1]!.fields.others, [
        { role: other.role, reaches: ['database_owner', 'database_create', 'schema_create'] },
      ]);
    } finally {
      await other.drop();
    }
  });
});
