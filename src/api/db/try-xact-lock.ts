/**
 * A seller-scoped advisory lock taken for the rest of a transaction only if it is free now
 * (`pg_try_advisory_xact_lock(hashtextextended(name, salt))`): a caller that finds it held answers at once
 * instead of waiting on a pooled connection (the payout and endpoint-set stores, ../sellers/store/).
 *
 * Defends against: one tenant's burst of requests behind a held lock filling the pool every tenant shares.
 */
import type { Knex } from 'knex';

/** True when this transaction now holds the lock `name` (salted by `salt`); false when another holds it. */
export async function tryXactLock(trx: Knex.Transaction, name: string, salt: number): Promise<boolean> {
  const tried = (await trx.raw('SELECT pg_try_advisory_xact_lock(hashtextextended(?, ?)) AS locked', [name, salt])) as {
    rows: Array<{ locked: boolean }>;
  };
  return tried.rows[0]?.locked === true;
}
