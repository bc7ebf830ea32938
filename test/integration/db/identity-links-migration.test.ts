/**
 * Migration 20261126100100 (identity links) on a database that already holds sign-in identities: they keep
 * their accounts and read as their own sign-ins (`linked_at` null); afterwards PostgreSQL refuses a chain
 * other than evm and solana, and a second account for an address already held (the primary key the link
 * relies on); it rolls back and forward again.
 */
import assert from 'node:assert/strict';
import { useTestDatabaseBefore } from '../../support/test-database.js';

const MIGRATION = '20261126100100_identity_links.ts';

describe('identity links migration (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('keeps the identities, refuses another chain and a second account per address; down and up again', async () => {
    const { knex } = db;
    const now = new Date();
    await knex('accounts').insert([
      { id: 'acc_a', created_at: now },
      { id: 'acc_b', created_at: now },
    ]);
    const identity = (chain: string, address: string, account_id: string) => ({
      chain,
      address,
      account_id,
      created_at: now,
      last_sign_in_at: now,
    });
    await knex('identities').insert([
      identity('evm', '0x00000000000000000000000000000000000000aa', 'acc_a'),
      identity('solana', '11111111111111111111111111111111', 'acc_a'),
    ]);

    await knex.migrate.up();
    const rows = await knex('identities').orderBy('chain').select('chain', 'account_id', 'linked_at');
    assert.deepEqual(rows, [
      { chain: 'evm', account_id: 'acc_a', linked_at: null },
      { chain: 'solana', account_id: 'acc_a', linked_at: null },
    ]);
    await assert.rejects(knex('identities').insert(identity('btc', 'bc1q', 'acc_b')), /identities_chain/);
    await assert.rejects(
      knex('identities').insert({ ...identity('solana', '11111111111111111111111111111111', 'acc_b'), linked_at: now }),
      /identities_pkey/,
      'an address is one account’s',
    );
    await knex('identities').insert({
      ...identity('solana', 'So11111111111111111111111111111111111111112', 'acc_b'),
      linked_at: now,
    });

    await knex.migrate.down();
    assert.ok(!(await knex.schema.hasColumn('identities', 'linked_at')));
    await knex('identities').insert(identity('btc', 'bc1q', 'acc_b'));
    await knex('identities').where({ chain: 'btc' }).delete();
    await knex.migrate.up();
    assert.ok(await knex.schema.hasColumn('identities', 'linked_at'));
    assert.equal(Number((await knex('identities').count({ n: '*' }))[0]!.n), 3);
  });
});
