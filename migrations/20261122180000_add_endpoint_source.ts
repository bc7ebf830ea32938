/** Where an endpoint came from: `manual` (API/CLI) or `openapi` (ingested; refresh may remove it). */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('endpoints', (t) => {
    t.string('source', 16).notNullable().defaultTo('manual');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('endpoints', (t) => t.dropColumn('source'));
}
