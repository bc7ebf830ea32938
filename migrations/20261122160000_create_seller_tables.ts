/**
 * Sellers (services), their priced endpoints, and the seller ledger the middleware reports to
 * (idempotent on tx_hash).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sellers', (t) => {
    t.string('id', 40).primary();
    t.string('account_id', 40).notNullable().references('id').inTable('accounts');
    t.string('name', 128).notNullable();
    t.string('slug', 64).notNullable().unique();
    t.text('openapi_url');
    t.jsonb('capabilities').notNullable().defaultTo('[]');
    t.string('protocol', 8).notNullable().defaultTo('x402');
    t.string('payout_mode', 16).notNullable().defaultTo('direct');
    t.string('legal_entity', 256);
    t.string('country', 2);
    t.string('banking_state', 16).notNullable().defaultTo('none'); // none | declared | verified
    t.string('status', 16).notNullable().defaultTo('active'); // active | suspended
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['account_id']);
  });
  await knex.schema.createTable('endpoints', (t) => {
    t.string('id', 40).primary();
    t.string('seller_id', 40).notNullable().references('id').inTable('sellers');
    t.string('slug', 64).notNullable();
    t.string('method', 8).notNullable().defaultTo('GET');
    t.string('path', 512).notNullable();
    t.string('path_pattern', 512);
    t.bigInteger('price_micro').notNullable();
    t.jsonb('route_prices').notNullable().defaultTo('{}');
    t.jsonb('capabilities').notNullable().defaultTo('[]');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.unique(['seller_id', 'slug']);
    t.unique(['seller_id', 'method', 'path']);
  });
  await knex.schema.createTable('ledger_entries', (t) => {
    t.string('id', 40).primary();
    t.string('seller_id', 40).notNullable().references('id').inTable('sellers');
    t.string('endpoint_id', 40).references('id').inTable('endpoints');
    t.specificType('tx_hash', 'char(66)').notNullable().unique();
    t.specificType('payer', 'char(42)').notNullable();
    t.bigInteger('amount_micro').notNullable();
    t.string('network', 64).notNullable();
    t.string('method', 8);
    t.string('route', 512);
    t.specificType('content_hash', 'char(64)');
    t.string('authorization_id', 40);
    t.string('decision_id', 40);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['seller_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('ledger_entries');
  await knex.schema.dropTableIfExists('endpoints');
  await knex.schema.dropTableIfExists('sellers');
}
