/**
 * Indexes for the paged lists, each ordered by (created_at, id) within its owner: an account's agents and
 * sellers, a seller's endpoints, an account's PATs (which a seller's service PAT list narrows further). With
 * them a page — the first or the thousandth — is an index range read of `limit + 1` rows, where without them
 * every page read and sorted all of the owner's rows. The PAT index is partial (kind = 'pat'): api_tokens
 * also holds every sign-in session, which the PAT lists never show and the index then does not carry.
 *
 * The single-column account_id indexes of agents and sellers are dropped: the new ones start with
 * account_id and serve every lookup they served. Payout flushes already have (seller_id, created_at), as
 * wallets have (account_id, created_at). Building an index holds writes to its table for its duration;
 * these tables are written at sign-up and configuration time only, never on the pay path.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX agents_account_id_created_at_id_index ON agents (account_id, created_at, id)');
  await knex.raw('DROP INDEX agents_account_id_index');
  await knex.raw('CREATE INDEX sellers_account_id_created_at_id_index ON sellers (account_id, created_at, id)');
  await knex.raw('DROP INDEX sellers_account_id_index');
  await knex.raw('CREATE INDEX endpoints_seller_id_created_at_id_index ON endpoints (seller_id, created_at, id)');
  await knex.raw(
    `CREATE INDEX api_tokens_pat_account_id_created_at_id_index ON api_tokens (account_id, created_at, id) WHERE kind = 'pat'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX api_tokens_pat_account_id_created_at_id_index');
  await knex.raw('DROP INDEX endpoints_seller_id_created_at_id_index');
  await knex.raw('CREATE INDEX sellers_account_id_index ON sellers (account_id)');
  await knex.raw('DROP INDEX sellers_account_id_created_at_id_index');
  await knex.raw('CREATE INDEX agents_account_id_index ON agents (account_id)');
  await knex.raw('DROP INDEX agents_account_id_created_at_id_index');
}
