/**
 * Each signed wallet's spend counter, in its own narrow row (signer/owner-policy/signer-store-schema.ts
 * `0008_spend_counters`): a commit of spends decided on a snapshot holds only while the counter it read is the
 * row's, and storing a policy raises it — so a decision made on the policy a new one replaced cannot commit, as a
 * decision made on spends another process has since recorded cannot. Also: the migration carries each signed
 * wallet's counter over (raised, so no decision read before it commits after it) and removes the wallet row's own.
 */
import assert from 'node:assert/strict';
import knexFactory from 'knex';
import pg from 'pg';
import type { StoredPolicy } from '../../../signer/owner-policy/owner-policy-store.js';
import { SIGNER_MIGRATIONS } from '../../../signer/owner-policy/signer-store-schema.js';
import {
  commitDecidedSpends,
  readSpendStates,
  type SpendRow,
  type StateQuery,
} from '../../../signer/owner-policy/spend-statements.js';
import { createSignerDatabase, type SignerDatabase } from '../../support/test-database.js';
import { signerPolicyStore } from './signer-test-helpers.js';

const PAYEE = '0x209693bc6afc0c5328ba36faf03c514ef312287c';
const APPROVER = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const wallet = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;

const policyV = (version: number): StoredPolicy => ({
  policy: { daily_cap_usd: '1' } as StoredPolicy['policy'],
  version,
  policyHash: `0x${'ab'.repeat(32)}`,
  issuedAt: 1_700_000_000 + version,
  signature: `0x${'cd'.repeat(65)}`,
});

const spend = (address: string, n: number): SpendRow => [
  n.toString(16).padStart(32, '0'),
  address,
  '1000',
  PAYEE,
  new Date(),
];

function stateQuery(address: string): StateQuery {
  const now = new Date();
  return {
    address,
    dayStart: now,
    weekStart: now,
    monthStart: now,
    velocityStart: now,
    since: new Date(now.getTime() - 60_000),
  };
}

/** Migrates the store with the signer's migrations up to and including `last` (all of them when absent). */
async function migrate(connectionString: string, last?: string): Promise<void> {
  const knex = knexFactory({ client: 'pg', connection: connectionString, pool: { min: 0, max: 1 } });
  const all = await SIGNER_MIGRATIONS.getMigrations([]);
  const upTo =
    last === undefined ? all.length : all.findIndex((m) => SIGNER_MIGRATIONS.getMigrationName(m) === last) + 1;
  try {
    await knex.migrate.latest({
      migrationSource: { ...SIGNER_MIGRATIONS, getMigrations: () => Promise.resolve(all.slice(0, upTo)) },
      tableName: 'signer_migrations',
      disableMigrationsListValidation: true,
    });
  } finally {
    await knex.destroy();
  }
}

describe("the signer store's spend counters", function () {
  this.timeout(60_000);
  let store: SignerDatabase;
  let db: pg.Client;

  beforeEach(async () => {
    store = await createSignerDatabase();
    db = new pg.Client(store.connectionString);
    await db.connect();
  });
  afterEach(async () => {
    await db?.end();
    await store?.drop();
  });

  it('a decision read before a policy is stored cannot commit after it; one read after can', async () => {
    await migrate(store.connectionString);
    const policies = signerPolicyStore(store.connectionString, 2);
    try {
      const address = wallet(1);
      const setPolicy = (version: number) =>
        policies.setPolicy(address, () => ({
          authority: { kind: 'approver', address: null },
          policy: policyV(version),
          signedBy: APPROVER,
        }));
      await setPolicy(1);
      const before = (await readSpendStates(db, [stateQuery(address)])).get(address)!.mark;
      await setPolicy(2);
      const stale = await commitDecidedSpends(db, [before], [spend(address, 1)]);
      assert.equal(stale.size, 0, 'the decision on version 1 does not commit under version 2');
      const fresh = (await readSpendStates(db, [stateQuery(address)])).get(address)!.mark;
      assert.equal(fresh.version, 2);
      const committed = await commitDecidedSpends(db, [fresh], [spend(address, 2)]);
      assert.equal(committed.get(address), String(BigInt(fresh.seq) + 1n), 'the commit raised the counter');
      const { rows } = await db.query<{ ref: string }>('SELECT ref FROM signer_spends WHERE address = $1', [address]);
      assert.deepEqual(
        rows.map((r) => r.ref),
        [spend(address, 2)[0]],
        'only the decision on the current policy recorded its spend',
      );
      // The commit's own counter is now the row's: a second decision on the same read fails too.
      assert.equal((await commitDecidedSpends(db, [fresh], [spend(address, 3)])).size, 0);
    } finally {
      await policies.close();
    }
  });

  it("the migration gives each signed wallet its counter, raised, and drops the wallet row's own", async () => {
    await migrate(store.connectionString, '0007_cheap_spelling_checks');
    const [signed, open] = [wallet(2), wallet(3)];
    await db.query(
      `INSERT INTO signer_wallets (address, authority_kind, policy, policy_version, policy_hash, policy_issued_at,
                                   policy_signature, spend_seq)
       VALUES ($1, 'approver', '{}', 1, $2, 1, $3, 41), ($4, NULL, NULL, NULL, NULL, NULL, NULL, 0)`,
      [signed, `0x${'ab'.repeat(32)}`, `0x${'cd'.repeat(65)}`, open],
    );
    await migrate(store.connectionString);
    const { rows } = await db.query<{ address: string; spend_seq: string }>(
      'SELECT address, spend_seq FROM signer_spend_counters ORDER BY address',
    );
    assert.deepEqual(rows, [{ address: signed, spend_seq: '42' }]);
    const columns = await db.query(
      `SELECT 1 FROM information_schema.columns WHERE table_name = 'signer_wallets' AND column_name = 'spend_seq'`,
    );
    assert.equal(columns.rowCount, 0, "the wallet row's counter is gone");
    // A decision read with the old counter (41) cannot commit after the migration.
    const stale = await commitDecidedSpends(db, [{ address: signed, version: 1, seq: '41' }], [spend(signed, 9)]);
    assert.equal(stale.size, 0);
  });
});
