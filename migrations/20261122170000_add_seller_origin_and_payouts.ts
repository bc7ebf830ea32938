/** Origin verification (origin, issued token, verified time) and payout flush history for sellers. */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sellers', (t) => {
    t.text('origin');
    t.string('verification_token', 80);
    t.timestamp('verified_at', { useTz: true });
  });
  // The payout mode in force when a row was earned: only platform_mor rows accrue payables.
  await knex.schema.alterTable('ledger_entries', (t) => {
    t.string('payout_mode', 16).notNullable().defaultTo('direct');
  });
  await knex.schema.createTable('payout_flushes', (t) => {
    t.string('id', 40).primary();
    t.string('seller_id', 40).notNullable().references('id').inTable('sellers');
    t.bigInteger('amount_micro').notNullable();
    t.string('created_by', 64).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['seller_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('payout_flushes');
  await knex.schema.alterTable('ledger_entries', (t) => t.dropColumn('payout_mode'));
  await knex.schema.alterTable('sellers', (t) => {
    t.dropColumn('origin');
    t.dropColumn('verification_token');
    t.dropColumn('verified_at');
  });
}
