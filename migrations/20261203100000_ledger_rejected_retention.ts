/**
 * Rejected ledger rows are kept for a while, not forever (src/api/sellers/ledger/rejected-ledger-sweeper.ts,
 * TREASURY_LEDGER_REJECTED_RETENTION_DAYS):
 * - `ledger_entries_rejected_age`: the rejected rows by created_at (partial), so the sweep finds the oldest without
 *   reading any other row, whichever seller reported them;
 * - the rollup of unverified rows per day (seller_unverified_days, migration 20261202120000) keeps what a retention
 *   delete takes: its delete trigger no longer fires for a rejected row deleted in a transaction that declared itself
 *   the retention sweep (`SELECT set_config('treasury.ledger_retention', 'on', true)`, transaction-local), so the
 *   revenue summary's `rejected` figure for whole days stays what was reported and rejected. Any other delete takes
 *   the row out of its day as before.
 *
 * Building the index holds writes to ledger_entries for its duration. Down restores the trigger as it was and drops
 * the index (rows already deleted stay counted).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX ledger_entries_rejected_age ON ledger_entries (created_at) WHERE status = 'rejected'`);
  await knex.raw(`
    DROP TRIGGER ledger_entries_unverified_days_delete ON ledger_entries;
    CREATE TRIGGER ledger_entries_unverified_days_delete AFTER DELETE ON ledger_entries
      FOR EACH ROW WHEN (
        OLD.status <> 'rejected' OR current_setting('treasury.ledger_retention', true) IS DISTINCT FROM 'on')
      EXECUTE FUNCTION seller_unverified_days_track();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER ledger_entries_unverified_days_delete ON ledger_entries;
    CREATE TRIGGER ledger_entries_unverified_days_delete AFTER DELETE ON ledger_entries
      FOR EACH ROW EXECUTE FUNCTION seller_unverified_days_track();
  `);
  await knex.raw('DROP INDEX IF EXISTS ledger_entries_rejected_age');
}
