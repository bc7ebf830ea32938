/**
 * A new wallet is counted against its owner's wallet bounds (src/api/services/wallet-bounds.ts): the agent
 * whose Treasury account it goes to is looked up by that account, once per wallet created. Building it holds
 * writes to agents (one row per agent) for its duration.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX agents_treasury_account_id_index ON agents (treasury_account_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS agents_treasury_account_id_index');
}
