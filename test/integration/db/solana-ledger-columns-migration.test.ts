/**
 * Migration 20261129130000 (Solana ledger columns) on a database that already holds an EVM ledger row and
 * pay-to: the old values read the same without their pad spaces; a Solana row (a base58 signature of up to 88
 * characters, a base58 payer) and a Solana pay-to can be stored, case kept; a row spelled for the other family
 * than its network, or a malformed pay-to, is refused by the CHECKs; the migration does not roll back while a
 * Solana value is stored, and rolls back and forward once none is.
 */
import assert from 'node:assert/strict';
import { useTestDatabaseBefore } from '../../support/test-database.js';
import { insertAccountAndSeller } from '../../support/migration-fixtures.js';

const MIGRATION = '20261129130000_solana_ledger_columns.ts';
const EVM_TX = `0x${'ab'.repeat(32)}`;
const EVM_PAYER = '0x857b06519e91e3a54538791bdbb0e22373e36b66';
const SOL_TX = '3pDzsX8PRftcbkm55okiE86v4oRbngwMS7ARZhnSnvfVtGBAYb1e2mJi1s27Gtqro31RkPkEdpJrKo6CDe36CLZJ';
const SOL_PAYER = 'Ggh7LYhQWsTmN3BD5ddB3kr1KyeCAXYDdecwtCDGUGx2';
const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

describe('Solana ledger columns migration (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('widens the columns with per-family CHECKs, keeps old values, and rolls back only without Solana values', async () => {
    const { knex } = db;
    const now = new Date();
    await insertAccountAndSeller(knex, now);
    const row = (id: string, tx_hash: string, payer: string, network: string) => ({
      id,
      seller_id: 'sel_a',
      tx_hash,
      payer,
      amount_micro: '10000',
      network,
      created_at: now,
    });
    await knex('ledger_entries').insert(row('led_evm', EVM_TX, EVM_PAYER, 'eip155:84532'));
    await knex('sellers_pay_to').insert({ seller_id: 'sel_a', address: EVM_PAYER, signature: 's', created_at: now });

    await knex.migrate.up();
    const evm = await knex('ledger_entries').where({ id: 'led_evm' }).first('tx_hash', 'payer');
    assert.deepEqual([evm.tx_hash, evm.payer], [EVM_TX, EVM_PAYER]);
    await knex('ledger_entries').insert(row('led_sol', SOL_TX, SOL_PAYER, DEVNET));
    await knex('sellers_pay_to').insert({ seller_id: 'sel_a', address: SOL_PAYER, signature: 's', created_at: now });
    const sol = await knex('ledger_entries').where({ tx_hash: SOL_TX }).first('payer');
    assert.equal(sol.payer, SOL_PAYER, 'case kept');

    const refused = async (insert: Promise<unknown>) =>
      assert.rejects(insert, (err: { code?: string }) => err.code === '23514');
    await refused(knex('ledger_entries').insert(row('led_x1', SOL_TX.slice(0, 80), EVM_PAYER, DEVNET)));
    await refused(knex('ledger_entries').insert(row('led_x2', `0x${'cd'.repeat(32)}`, SOL_PAYER, 'eip155:84532')));
    await refused(knex('ledger_entries').insert(row('led_x3', SOL_TX.replace('3', '0'), SOL_PAYER, DEVNET)));
    await refused(
      knex('sellers_pay_to').insert({ seller_id: 'sel_a', address: 'not an address', signature: 's', created_at: now }),
    );

    await assert.rejects(knex.migrate.down(), /value too long/);
    await knex('ledger_entries').where({ network: DEVNET }).delete();
    await knex('sellers_pay_to').where({ address: SOL_PAYER }).delete();
    await knex.migrate.down();
    await knex.migrate.up();
    assert.equal((await knex('ledger_entries').first('tx_hash')).tx_hash, EVM_TX);
  });
});
