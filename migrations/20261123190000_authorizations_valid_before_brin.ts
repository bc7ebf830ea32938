/**
 * A BRIN index on authorizations.valid_before, for the sweep that releases expired reservations
 * (src/api/services/expired-reservation-sweeper.ts): it reads the rows whose authorization expired since its
 * previous sweep, and valid_before grows with insertion order, so a block-range index finds them among the
 * newest pages without a B-tree's cost on every payment. The signature record changes no column of it, so
 * its update stays HOT.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX authorizations_valid_before_brin ON authorizations USING brin (valid_before)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS authorizations_valid_before_brin');
}
