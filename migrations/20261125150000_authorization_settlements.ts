/**
 * The settlement of an x402 `upto` authorization as verified on chain: the amount the transaction moved
 * (raw token units), the transaction, and when Treasury recorded it. A transaction settles one
 * authorization (Permit2 spends its nonce once): UNIQUE (network, settlement_tx). ANALYZE samples the new
 * columns with a target of 10, as every other column of the pay tables.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('authorizations', (t) => {
    t.specificType('settled_raw', 'numeric(78, 0)').nullable();
    t.string('settlement_tx', 66).nullable();
    t.timestamp('settled_at', { useTz: true }).nullable();
  });
  // Sampled like every other column of the pay tables (migration 20261124120000).
  for (const column of ['settled_raw', 'settlement_tx', 'settled_at'])
    await knex.raw('ALTER TABLE authorizations ALTER COLUMN ?? SET STATISTICS 10', [column]);
  await knex.raw(
    'CREATE UNIQUE INDEX authorizations_network_settlement_tx_unique ON authorizations (network, settlement_tx) WHERE settlement_tx IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS authorizations_network_settlement_tx_unique');
  await knex.schema.alterTable('authorizations', (t) => {
    t.dropColumns('settled_raw', 'settlement_tx', 'settled_at');
  });
}
