/**
 * A seller's revenue per UTC day and endpoint (`seller_revenue_days`), so that `GET /v1/ledger/revenue` adds
 * up days instead of every ledger row in its range: a trigger adds each ledger entry to its day's row in the
 * entry's own transaction, whoever inserts it. `endpoint_key` is the entry's endpoint id, or '' for rows no
 * endpoint was matched to (a primary key cannot hold a null).
 *
 * The backfill runs with ledger_entries locked against inserts (SHARE mode), so no row is counted twice or
 * missed while it sums them.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('seller_revenue_days', (t) => {
    t.string('seller_id', 40).notNullable().references('id').inTable('sellers');
    t.date('day').notNullable();
    t.string('endpoint_key', 40).notNullable();
    t.bigInteger('total_micro').notNullable();
    t.bigInteger('entries').notNullable();
    t.primary(['seller_id', 'day', 'endpoint_key']);
  });
  await knex.raw(`
    CREATE FUNCTION seller_revenue_days_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO seller_revenue_days (seller_id, day, endpoint_key, total_micro, entries)
        VALUES (NEW.seller_id, (NEW.created_at AT TIME ZONE 'UTC')::date, COALESCE(NEW.endpoint_id, ''), NEW.amount_micro, 1)
        ON CONFLICT (seller_id, day, endpoint_key) DO UPDATE
          SET total_micro = seller_revenue_days.total_micro + EXCLUDED.total_micro, entries = seller_revenue_days.entries + 1;
      RETURN NULL;
    END $$;
    CREATE TRIGGER ledger_entries_revenue_days AFTER INSERT ON ledger_entries
      FOR EACH ROW EXECUTE FUNCTION seller_revenue_days_add();
  `);
  await knex.raw('LOCK TABLE ledger_entries IN SHARE MODE');
  await knex.raw(`
    INSERT INTO seller_revenue_days (seller_id, day, endpoint_key, total_micro, entries)
    SELECT seller_id, (created_at AT TIME ZONE 'UTC')::date, COALESCE(endpoint_id, ''), sum(amount_micro), count(*)
      FROM ledger_entries GROUP BY 1, 2, 3`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS ledger_entries_revenue_days ON ledger_entries;
    DROP FUNCTION IF EXISTS seller_revenue_days_add();
  `);
  await knex.schema.dropTableIfExists('seller_revenue_days');
}
