/**
 * A buyer PAT's daily total carries the cap it was counted against, and PostgreSQL refuses a total above it
 * (CHECK pat_spend_totals_within_cap). Each write that counts a payment sets `cap_micro` to the cap its
 * decision enforced (NULL for a PAT without one), so a payment decided on a total this process remembered
 * cannot push the day past the cap when another process counted payments meanwhile: its statement fails,
 * nothing in it is written, and the payment is decided again on a read under the PAT's lock. Rows written
 * before this migration have no cap and pass until their next write.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('pat_spend_totals', (t) => {
    t.bigInteger('cap_micro').nullable();
  });
  await knex.raw(
    'ALTER TABLE pat_spend_totals ADD CONSTRAINT pat_spend_totals_within_cap CHECK (cap_micro IS NULL OR spent_micro <= cap_micro)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE pat_spend_totals DROP CONSTRAINT IF EXISTS pat_spend_totals_within_cap');
  await knex.schema.alterTable('pat_spend_totals', (t) => {
    t.dropColumn('cap_micro');
  });
}
