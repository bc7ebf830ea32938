/**
 * Migration 20261129120000 (Solana addresses) on a database that already holds EVM wallets and payments:
 * they stay as they were, unpadded; afterwards each address column takes base58 on a `solana:` network and
 * 0x on an `eip155:` one, never the other way round; it rolls back (EVM rows only) and forward again.
 */
import assert from 'node:assert/strict';
import { useTestDatabaseBefore } from '../../support/test-database.js';

const MIGRATION = '20261129120000_solana_addresses.ts';
const EVM = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const BASE58 = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

describe('Solana addresses migration (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('keeps EVM rows, then holds each address column to its network family; down and up again', async () => {
    const { knex } = db;
    const now = new Date();
    await knex('treasury_accounts').insert({
      id: 'acc_1',
      owner_type: 'agent',
      owner_id: 'a',
      account_key_ref: 'ak',
      created_at: now,
    });
    const wallet = (id: string, network: string, address: string) => ({
      id,
      account_id: 'acc_1',
      network,
      address,
      public_key: '0x00',
      created_at: now,
      updated_at: now,
    });
    await knex('wallets').insert(wallet('wal_evm', 'eip155:84532', EVM));
    await knex('balance_readings').insert({
      network: 'eip155:84532',
      asset: EVM.toLowerCase(),
      address: EVM.toLowerCase(),
      balance_raw: '1',
      read_at: now,
    });

    await knex.migrate.up();
    assert.equal((await knex('wallets').where({ id: 'wal_evm' }).first()).address, EVM);
    await knex('wallets').insert(wallet('wal_sol', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', BASE58));
    assert.equal((await knex('wallets').where({ id: 'wal_sol' }).first()).address, BASE58, 'stored unpadded');
    for (const [row, what] of [
      [wallet('wal_x1', 'eip155:84532', BASE58), 'base58 on an EVM network'],
      [wallet('wal_x2', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', EVM), '0x on a Solana network'],
      [wallet('wal_x3', 'cosmos:hub', EVM), 'another namespace'],
      [wallet('wal_x4', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', `0${BASE58.slice(1)}`), 'not base58'],
    ] as const)
      await assert.rejects(knex('wallets').insert(row), /wallets_address_spelling/, what);
    await assert.rejects(
      knex('wallet_keys').insert({
        wallet_id: 'wal_sol',
        version: 1,
        address: 'not an address',
        public_key: '0x',
        created_at: now,
      }),
      /wallet_keys_address_spelling/,
    );

    await knex('wallets').where({ id: 'wal_sol' }).delete();
    await knex.migrate.down();
    const column = await knex.raw(
      `SELECT data_type FROM information_schema.columns WHERE table_name = 'wallets' AND column_name = 'address'`,
    );
    assert.equal(column.rows[0].data_type, 'character');
    await knex.migrate.up();
    assert.equal((await knex('wallets').where({ id: 'wal_evm' }).first()).address, EVM);
  });
});
