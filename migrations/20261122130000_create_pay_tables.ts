/**
 * The pay path: signed authorizations (EIP-3009 nonce UNIQUE per sender, Idempotency-Key UNIQUE per
 * wallet), running spend totals per UTC window (so a busy wallet's check stays O(1)), policy decisions
 * (`pd_…`), and the wallet's last payment time for cooling-off.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('wallets', (t) => {
    t.timestamp('last_payment_at', { useTz: true });
  });

  await knex.schema.createTable('policy_decisions', (t) => {
    t.string('id', 40).primary();
    t.string('wallet_id', 40).notNullable().references('id').inTable('wallets');
    t.string('outcome', 8).notNullable(); // allow | deny
    t.string('kind', 16).notNullable(); // pay | transfer
    t.bigInteger('amount_micro').notNullable();
    t.specificType('to_address', 'char(42)').notNullable();
    t.string('capability', 128);
    t.jsonb('violations').notNullable();
    t.jsonb('headroom').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['wallet_id', 'created_at']);
  });

  await knex.schema.createTable('authorizations', (t) => {
    t.string('id', 40).primary();
    t.string('wallet_id', 40).notNullable().references('id').inTable('wallets');
    t.string('decision_id', 40).notNullable().references('id').inTable('policy_decisions');
    t.string('kind', 16).notNullable();
    t.string('network', 64).notNullable();
    t.specificType('asset', 'char(42)').notNullable();
    t.specificType('from_address', 'char(42)').notNullable();
    t.specificType('to_address', 'char(42)').notNullable();
    t.specificType('value_raw', 'numeric(78,0)').notNullable();
    t.bigInteger('amount_micro').notNullable();
    t.bigInteger('valid_after').notNullable();
    t.bigInteger('valid_before').notNullable();
    t.specificType('nonce', 'char(66)').notNullable();
    t.text('signature').notNullable();
    t.string('capability', 128);
    t.text('resource');
    t.string('idempotency_key', 128);
    t.specificType('request_hash', 'char(64)');
    t.jsonb('response').notNullable();
    t.string('actor', 64).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.unique(['from_address', 'nonce']);
    t.unique(['wallet_id', 'idempotency_key']);
    t.index(['wallet_id', 'created_at']);
  });

  await knex.schema.createTable('wallet_spend_totals', (t) => {
    t.string('wallet_id', 40).notNullable().references('id').inTable('wallets');
    t.string('window_kind', 8).notNullable(); // day | week | month
    t.date('window_start').notNullable();
    t.bigInteger('spent_micro').notNullable();
    t.integer('payment_count').notNullable();
    t.primary(['wallet_id', 'window_kind', 'window_start']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('wallet_spend_totals');
  await knex.schema.dropTableIfExists('authorizations');
  await knex.schema.dropTableIfExists('policy_decisions');
  await knex.schema.alterTable('wallets', (t) => t.dropColumn('last_payment_at'));
}
