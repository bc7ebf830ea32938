/**
 * The settlement of an x402 `upto` authorization as verified on chain: the amount the transaction moved
 * (raw token units), the transaction, and when Treasury recorded it. A transaction settles one
 * authorization (Permit2 spends its nonce once): UNIQUE (network, settlement_tx).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('authorizations', (t) => {
    t.specificType('settled_raw', 'numeric(78, 0)').nullable();
    t.string('settlement_tx', 66).nullable();
    t.timestamp('settled_at', { useTz: true }).nullable();
  });
  await knex.raw('CREATE UNIQUE INDEX authorizations_network_settlement_tx_unique ON authorizations (network, settlement_tx) WHERE settlement_tx IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS authorizations_network_settlement_tx_unique');
  await knex.schema.alterTable('authorizations', (t) => {
    t.dropColumns('settled_raw', 'settlement_tx', 'settled_at');
  });
}
