/**
 * The payment history (GET /v1/wallets/{id}/payments) shows an `exact` payment's transaction when a seller
 * reported it in a ledger row Treasury verified on chain: it looks the row up by the authorization it names.
 * Partial (rows naming an authorization only). Building it holds writes to ledger_entries for its duration.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'CREATE INDEX ledger_entries_authorization_id_index ON ledger_entries (authorization_id) WHERE authorization_id IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS ledger_entries_authorization_id_index');
}
