/**
 * authorizations pages keep a quarter free: each row is updated once, when its signature is recorded
 * (status, signature, response, signed_at — none of them indexed), and with room on its page that update is
 * a HOT update, which adds no entry to any of the table's five indexes. Measured under a steady 400
 * payments/s: 70 % of the records HOT instead of 28 %, 1.7 WAL records per record instead of 4.7, execution
 * 106–112 µs per payment instead of 139. Costs about a third more heap pages. Only pages written from now on
 * are affected; existing rows stay as they are.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE authorizations SET (fillfactor = 75)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE authorizations RESET (fillfactor)');
}
