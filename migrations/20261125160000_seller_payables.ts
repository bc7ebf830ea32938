/**
 * A seller's accrued payables as one running row instead of two sums over its whole history at every read:
 * `seller_payables` holds what the seller earned in `platform_mor` mode and what was paid out to it. Triggers
 * keep it in the same transaction as the row that changes it — a `platform_mor` ledger entry adds to
 * `earned_micro`, a payout flush to `paid_micro` — whichever process (or version of it) inserts the row, and
 * a flush above what was earned fails (CHECK seller_payables_paid_within_earned).
 *
 * The backfill runs with both tables locked against inserts (SHARE mode), so no row is counted twice or
 * missed while it sums them.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('seller_payables', (t) => {
    t.string('seller_id', 40).primary().references('id').inTable('sellers');
    t.bigInteger('earned_micro').notNullable().defaultTo(0);
    t.bigInteger('paid_micro').notNullable().defaultTo(0);
  });
  await knex.raw(
    'ALTER TABLE seller_payables ADD CONSTRAINT seller_payables_paid_within_earned CHECK (paid_micro <= earned_micro)',
  );
  await knex.raw(`
    CREATE FUNCTION seller_payables_earned() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO seller_payables (seller_id, earned_micro) VALUES (NEW.seller_id, NEW.amount_micro)
        ON CONFLICT (seller_id) DO UPDATE SET earned_micro = seller_payables.earned_micro + EXCLUDED.earned_micro;
      RETURN NULL;
    END $$;
    CREATE TRIGGER ledger_entries_payables AFTER INSERT ON ledger_entries
      FOR EACH ROW WHEN (NEW.payout_mode = 'platform_mor') EXECUTE FUNCTION seller_payables_earned();
    CREATE FUNCTION seller_payables_paid() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- An update, not an upsert: the row proposed for an INSERT … ON CONFLICT is held to the CHECK before the
      -- conflict is seen. With no row nothing was earned, and the insert fails the CHECK.
      UPDATE seller_payables SET paid_micro = paid_micro + NEW.amount_micro WHERE seller_id = NEW.seller_id;
      IF NOT FOUND THEN
        INSERT INTO seller_payables (seller_id, paid_micro) VALUES (NEW.seller_id, NEW.amount_micro);
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER payout_flushes_payables AFTER INSERT ON payout_flushes
      FOR EACH ROW EXECUTE FUNCTION seller_payables_paid();
  `);
  await knex.raw('LOCK TABLE ledger_entries, payout_flushes IN SHARE MODE');
  await knex.raw(`
    INSERT INTO seller_payables (seller_id, earned_micro, paid_micro)
    SELECT s.id, COALESCE(e.earned, 0), COALESCE(p.paid, 0)
      FROM sellers s
      LEFT JOIN (SELECT seller_id, sum(amount_micro) AS earned FROM ledger_entries WHERE payout_mode = 'platform_mor' GROUP BY seller_id) e ON e.seller_id = s.id
      LEFT JOIN (SELECT seller_id, sum(amount_micro) AS paid FROM payout_flushes GROUP BY seller_id) p ON p.seller_id = s.id
     WHERE e.earned IS NOT NULL OR p.paid IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS ledger_entries_payables ON ledger_entries;
    DROP TRIGGER IF EXISTS payout_flushes_payables ON payout_flushes;
    DROP FUNCTION IF EXISTS seller_payables_earned();
    DROP FUNCTION IF EXISTS seller_payables_paid();
  `);
  await knex.schema.dropTableIfExists('seller_payables');
}
