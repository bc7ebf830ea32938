/**
 * A seller's unverified ledger rows per UTC day, endpoint and status (`seller_unverified_days`), so that the
 * `pending` and `rejected` figures of GET /v1/ledger/revenue add up days instead of every unverified row the seller
 * ever reported (made-up transactions end `rejected` and are kept: an unranged summary read them all). It mirrors
 * seller_revenue_days (migrations 20261125170000, 20261201140000): `endpoint_key` is the row's endpoint id or ''.
 *
 * - One trigger function on ledger_entries (`seller_unverified_days_track`) keeps it in the row's own transaction:
 *   an INSERT of an unverified row adds it to its bucket; an UPDATE that changes the status, seller, amount,
 *   endpoint or created_at moves it out of its old bucket (when unverified) and into its new one (when unverified:
 *   out for good once verified); a DELETE takes it out. Updates of other columns (the verifier's lease,
 *   next_check_at, attempts) do not fire it.
 * - Of a row's two buckets, the `pending` one is always written before the `rejected` one (the rows are locked in
 *   status order), so the verifier rejecting a row and a pay-to proof reopening rejected rows never wait on each
 *   other in a cycle.
 * - A bucket is never deleted: emptied, it stays with zero entries (at most one per seller, day, endpoint and status).
 * - The backfill runs with ledger_entries and the new table locked against writes (SHARE ROW EXCLUSIVE), so no row
 *   is counted twice or missed.
 *
 * Down drops the trigger, its functions and the table.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('seller_unverified_days', (t) => {
    t.string('seller_id', 40).notNullable().references('id').inTable('sellers');
    t.date('day').notNullable();
    t.string('endpoint_key', 40).notNullable();
    t.string('status', 16).notNullable();
    t.bigInteger('total_micro').notNullable();
    t.bigInteger('entries').notNullable();
    t.primary(['seller_id', 'day', 'endpoint_key', 'status']);
  });
  await knex.raw(`
    CREATE FUNCTION seller_unverified_days_bump(r ledger_entries, sign integer) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO seller_unverified_days (seller_id, day, endpoint_key, status, total_micro, entries)
        VALUES (r.seller_id, (r.created_at AT TIME ZONE 'UTC')::date, COALESCE(r.endpoint_id, ''), r.status, sign * r.amount_micro, sign)
        ON CONFLICT (seller_id, day, endpoint_key, status) DO UPDATE
          SET total_micro = seller_unverified_days.total_micro + EXCLUDED.total_micro,
              entries = seller_unverified_days.entries + EXCLUDED.entries;
    END $$;
    CREATE FUNCTION seller_unverified_days_track() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        IF NEW.status <> 'verified' THEN PERFORM seller_unverified_days_bump(NEW, 1); END IF;
      ELSIF TG_OP = 'DELETE' THEN
        IF OLD.status <> 'verified' THEN PERFORM seller_unverified_days_bump(OLD, -1); END IF;
      ELSIF NEW.status <> 'verified' AND OLD.status <> 'verified' AND NEW.status < OLD.status THEN
        -- rejected -> pending: the pending bucket first, as every other move writes it.
        PERFORM seller_unverified_days_bump(NEW, 1);
        PERFORM seller_unverified_days_bump(OLD, -1);
      ELSE
        IF OLD.status <> 'verified' THEN PERFORM seller_unverified_days_bump(OLD, -1); END IF;
        IF NEW.status <> 'verified' THEN PERFORM seller_unverified_days_bump(NEW, 1); END IF;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER ledger_entries_unverified_days_insert AFTER INSERT ON ledger_entries
      FOR EACH ROW EXECUTE FUNCTION seller_unverified_days_track();
    CREATE TRIGGER ledger_entries_unverified_days_update
      AFTER UPDATE OF status, seller_id, amount_micro, endpoint_id, created_at ON ledger_entries
      FOR EACH ROW WHEN (
        OLD.status IS DISTINCT FROM NEW.status OR OLD.seller_id IS DISTINCT FROM NEW.seller_id
        OR OLD.amount_micro IS DISTINCT FROM NEW.amount_micro OR OLD.endpoint_id IS DISTINCT FROM NEW.endpoint_id
        OR OLD.created_at IS DISTINCT FROM NEW.created_at)
      EXECUTE FUNCTION seller_unverified_days_track();
    CREATE TRIGGER ledger_entries_unverified_days_delete AFTER DELETE ON ledger_entries
      FOR EACH ROW EXECUTE FUNCTION seller_unverified_days_track();
  `);
  await knex.raw('LOCK TABLE ledger_entries, seller_unverified_days IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(`
    INSERT INTO seller_unverified_days (seller_id, day, endpoint_key, status, total_micro, entries)
    SELECT seller_id, (created_at AT TIME ZONE 'UTC')::date, COALESCE(endpoint_id, ''), status, sum(amount_micro), count(*)
      FROM ledger_entries WHERE status <> 'verified' GROUP BY 1, 2, 3, 4`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS ledger_entries_unverified_days_insert ON ledger_entries;
    DROP TRIGGER IF EXISTS ledger_entries_unverified_days_update ON ledger_entries;
    DROP TRIGGER IF EXISTS ledger_entries_unverified_days_delete ON ledger_entries;
    DROP FUNCTION IF EXISTS seller_unverified_days_track();
    DROP FUNCTION IF EXISTS seller_unverified_days_bump(ledger_entries, integer);
  `);
  await knex.schema.dropTableIfExists('seller_unverified_days');
}
