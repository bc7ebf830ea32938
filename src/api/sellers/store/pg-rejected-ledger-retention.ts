/**
 * The retention delete of rejected ledger rows (../ledger/rejected-ledger-sweeper.ts): one bounded batch of the
 * oldest rejected rows reported before a cutoff, whichever seller reported them, in one short transaction — found on
 * their own partial index (`ledger_entries_rejected_age`, migration 20261203100000), locked with SKIP LOCKED (a row
 * being reopened by a pay-to proof, or deleted by another API process's sweep, is left for the next batch) and
 * checked again once locked (a row reopened meanwhile is `pending`, and stays).
 *
 * The transaction declares itself the retention sweep (`treasury.ledger_retention`, transaction-local), so the
 * trigger of seller_unverified_days leaves the rows' days counted: the revenue summary's whole days still say what
 * was reported and rejected.
 *
 * Defends: a retention delete taking a row that is not rejected (pending rows waiting for the verifier, verified
 * ones), holding locks or a connection for long (one statement of at most `limit` rows), or changing the summary's
 * rejected counts of whole days. Does not defend: a range whose edge falls inside a day older than the retention —
 * its partial edge day is summed from the rows, and the deleted ones are no longer there.
 */
import type { Knex } from 'knex';

/** Deletes at most `limit` rejected rows created before `cutoff`, oldest first; answers how many it deleted. */
export async function deleteRejectedBefore(knex: Knex, cutoff: Date, limit: number): Promise<number> {
  return knex.transaction(async (trx) => {
    await trx.raw(`SELECT set_config('treasury.ledger_retention', 'on', true)`);
    // The batch is chosen and locked once (MATERIALIZED): as `id IN (subquery)` the planner may run the locking
    // subquery again for every row it deletes, and take far more than `limit` rows.
    const result = (await trx.raw(
      `WITH batch AS MATERIALIZED (
         SELECT id FROM ledger_entries
          WHERE status = 'rejected' AND created_at < ?
          ORDER BY created_at
          LIMIT ?
            FOR UPDATE SKIP LOCKED)
       DELETE FROM ledger_entries e USING batch WHERE e.id = batch.id AND e.status = 'rejected'`,
      [cutoff, limit],
    )) as { rowCount: number | null };
    return result.rowCount ?? 0;
  });
}
