/**
 * Identity: platform accounts, the wallet identities that sign in to them (SIWE / SIWS), their agents
 * (each with its own Treasury account), server-issued sign-in nonces, and token ownership for /v1/pats.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('accounts', (t) => {
    t.string('id', 40).primary();
    t.timestamp('created_at', { useTz: true }).notNullable();
  });
  await knex.schema.createTable('identities', (t) => {
    t.string('chain', 16).notNullable(); // evm | solana
    t.string('address', 64).notNullable(); // lower-case hex for evm, base58 for solana
    t.string('account_id', 40).notNullable().references('id').inTable('accounts');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('last_sign_in_at', { useTz: true }).notNullable();
    t.primary(['chain', 'address']);
  });
  await knex.schema.createTable('agents', (t) => {
    t.string('id', 40).primary();
    t.string('account_id', 40).notNullable().references('id').inTable('accounts');
    t.string('label', 128);
    t.string('treasury_account_id', 40).notNullable().references('id').inTable('treasury_accounts');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['account_id']);
  });
  await knex.schema.createTable('identity_nonces', (t) => {
    t.string('nonce', 64).primary();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
  });
  await knex.schema.alterTable('api_tokens', (t) => {
    t.string('account_id', 40);
    t.index(['account_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_tokens', (t) => t.dropColumn('account_id'));
  await knex.schema.dropTableIfExists('identity_nonces');
  await knex.schema.dropTableIfExists('agents');
  await knex.schema.dropTableIfExists('identities');
  await knex.schema.dropTableIfExists('accounts');
}
