/**
 * Rows a migration test stands on, written with only the columns every schema since the seller tables has: account
 * `acc_a` and its seller `sel_a`.
 */
import type { Knex } from 'knex';

export async function insertAccountAndSeller(knex: Knex, now: Date): Promise<void> {
  await knex('accounts').insert({ id: 'acc_a', created_at: now });
  await knex('sellers').insert({
    id: 'sel_a',
    account_id: 'acc_a',
    name: 'a',
    slug: 'a',
    created_at: now,
    updated_at: now,
  });
}
