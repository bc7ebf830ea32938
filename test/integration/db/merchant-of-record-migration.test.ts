/**
 * Migration 20261128120000 (merchant of record) on a database that already holds a seller history: what was
 * owed came from rows verified against the sellers' own addresses and is owed no more (payouts already recorded
 * stay `recorded`, and final); and it rolls back and forward again.
 */
import assert from 'node:assert/strict';
import { useTestDatabaseBefore } from '../../support/test-database.js';

const MIGRATION = '20261128120000_merchant_of_record.ts';

describe('merchant-of-record migration (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('owes nothing that never reached the platform, keeps recorded payouts final; down and up', async () => {
    const { knex } = db;
    const now = new Date();
    await knex('accounts').insert({ id: 'acct_mor_mig', created_at: now });
    await knex('sellers').insert({
      id: 'sel_mor_mig',
      account_id: 'acct_mor_mig',
      name: 'mor',
      slug: 'mor-mig',
      payout_mode: 'platform_mor',
      created_at: now,
      updated_at: now,
    });
    // Three self-reported $100 transfers, verified against the seller's own pay-to; $100 of it recorded as paid.
    for (let i = 1; i <= 3; i++)
      await knex('ledger_entries').insert({
        id: `led_mig_${i}`,
        seller_id: 'sel_mor_mig',
        tx_hash: `0x${i.toString(16).padStart(64, '0')}`,
        payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
        amount_micro: '100000000',
        network: 'eip155:84532',
        payout_mode: 'platform_mor',
        status: 'verified',
        log_index: 0,
        created_at: now,
      });
    await knex('payout_flushes').insert({
      id: 'po_mig',
      seller_id: 'sel_mor_mig',
      amount_micro: '100000000',
      created_by: 'test',
      created_at: now,
    });
    const payables = async () =>
      (await knex('seller_payables').where({ seller_id: 'sel_mor_mig' }).first('earned_micro', 'paid_micro')) as {
        earned_micro: string;
        paid_micro: string;
      };
    assert.deepEqual(await payables(), { earned_micro: '300000000', paid_micro: '100000000' });

    await knex.migrate.up();
    assert.deepEqual(await payables(), { earned_micro: '100000000', paid_micro: '100000000' }, 'owed: nothing');
    const payout = await knex('payout_flushes').where({ id: 'po_mig' }).first('status', 'tx_hash');
    assert.deepEqual(payout, { status: 'recorded', tx_hash: null });
    // A recorded payout is final; nothing can be paid above what was earned.
    await assert.rejects(knex('payout_flushes').where({ id: 'po_mig' }).update({ status: 'settled' }), /payout/);

    await knex.migrate.down();
    assert.equal(await knex.schema.hasTable('platform_collection_wallets'), false);
    await knex.migrate.up();
    assert.equal(await knex.schema.hasTable('platform_collection_wallets'), true);
  });
});
