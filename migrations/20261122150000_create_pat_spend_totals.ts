/** Per-PAT daily spend (UTC day) for the buyer PAT daily cap, updated in the pay transaction. */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('pat_spend_totals', (t) => {
    t.string('token_id', 40).notNullable().references('id').inTable('api_tokens');
    t.date('day').notNullable();
    t.bigInteger('spent_micro').notNullable();
    t.primary(['token_id', 'day']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('pat_spend_totals');
}
