/**
 * Core custody tables: Treasury accounts, bearer tokens (stored hashed), wallets with their key history,
 * and the append-only, hash-chained audit ledger. Never edit once landed; add a new migration instead.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('treasury_accounts', (t) => {
    t.string('id', 40).primary();
    t.string('owner_type', 64).notNullable();
    t.string('owner_id', 256).notNullable();
    t.text('account_key_ref').notNullable();
    t.string('status', 16).notNullable().defaultTo('active');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['owner_type', 'owner_id']);
  });

  await knex.schema.createTable('api_tokens', (t) => {
    t.string('id', 40).primary();
    t.specificType('token_hash', 'char(64)').notNullable().unique();
    t.string('kind', 16).notNullable(); // api_key | pat | session
    t.string('scope_type', 16).notNullable(); // treasury | agent | service | account
    t.string('scope_id', 64).notNullable();
    t.string('label', 128);
    t.boolean('single_use').notNullable().defaultTo(false);
    t.bigInteger('daily_cap_micro');
    t.string('created_by', 64).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('used_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.index(['scope_type', 'scope_id']);
  });

  await knex.schema.createTable('wallets', (t) => {
    t.string('id', 40).primary();
    t.string('account_id', 40).notNullable().references('id').inTable('treasury_accounts');
    t.string('label', 128);
    t.string('network', 64).notNullable();
    t.specificType('address', 'char(42)').notNullable();
    t.text('public_key').notNullable();
    t.text('wallet_key_ref');
    t.integer('key_version').notNullable().defaultTo(1);
    t.jsonb('policy').notNullable().defaultTo('{}');
    t.string('status', 16).notNullable().defaultTo('active');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.index(['account_id', 'created_at']);
    t.index(['address']);
  });
  await knex.raw(`ALTER TABLE wallets ADD CONSTRAINT wallets_status_check CHECK (status IN ('active','revoked'))`);

  await knex.schema.createTable('wallet_keys', (t) => {
    t.bigIncrements('id');
    t.string('wallet_id', 40).notNullable().references('id').inTable('wallets');
    t.integer('version').notNullable();
    t.specificType('address', 'char(42)').notNullable();
    t.text('public_key').notNullable();
    t.text('wallet_key_ref');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('retired_at', { useTz: true });
    t.timestamp('destroyed_at', { useTz: true });
    t.unique(['wallet_id', 'version']);
    t.index(['address']);
  });

  await knex.schema.createTable('audit_events', (t) => {
    t.bigIncrements('id');
    t.string('chain_key', 64).notNullable();
    t.integer('seq').notNullable();
    t.string('event_type', 64).notNullable();
    t.string('actor', 64).notNullable();
    t.jsonb('payload').notNullable();
    t.specificType('prev_hash', 'char(64)').notNullable();
    t.specificType('hash', 'char(64)').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.unique(['chain_key', 'seq']);
  });
  // Append-only: the ledger refuses UPDATE and DELETE at the database level.
  await knex.raw(`
    CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit_events is append-only' USING ERRCODE = 'insufficient_privilege';
    END $$;
  `);
  await knex.raw(`
    CREATE TRIGGER audit_events_no_update BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('audit_events');
  await knex.raw('DROP FUNCTION IF EXISTS audit_events_append_only()');
  await knex.schema.dropTableIfExists('wallet_keys');
  await knex.schema.dropTableIfExists('wallets');
  await knex.schema.dropTableIfExists('api_tokens');
  await knex.schema.dropTableIfExists('treasury_accounts');
}
