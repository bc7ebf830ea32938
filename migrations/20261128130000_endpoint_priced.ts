/**
 * Unpriced is not free (docs/gate.md#sellers-routing-and-the-catalogue): `endpoints.priced` says whether the
 * seller set the endpoint's price. An operation ingested from an OpenAPI document without `x-price-usd` is
 * stored with `priced = false` (its price_micro 0 is a placeholder, not a choice of "free"), and the gate does not
 * serve it until the seller prices it (any price, "0" included: free by choice). Every endpoint created or priced
 * through the API is priced.
 *
 * Existing rows: ingested (`source = 'openapi'`) at price 0 cannot be told apart from `x-price-usd: "0"`, so they
 * start unpriced; the next refresh marks those the document prices ("0" included) priced again.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('endpoints', (t) => {
    t.boolean('priced').notNullable().defaultTo(true);
  });
  await knex.raw("UPDATE endpoints SET priced = false WHERE source = 'openapi' AND price_micro = 0");
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('endpoints', (t) => t.dropColumn('priced'));
}
