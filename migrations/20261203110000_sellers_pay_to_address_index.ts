/**
 * `sellers_pay_to_address` (address): the pay path finds the sellers that proved a payee by its address alone
 * (src/api/pay/store/pg-payee-owners.ts, the challenge-origin binding), where the table's key is
 * (seller_id, address). Without it every payee not yet remembered scanned the table.
 *
 * Defends: the cost of a pay request naming a made-up payee growing with the number of proven pay-to addresses.
 * Down drops the index.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX sellers_pay_to_address ON sellers_pay_to (address)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX sellers_pay_to_address');
}
