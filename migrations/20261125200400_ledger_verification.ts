/**
 * Ledger rows are checked on chain before they count (docs/adr/0009-ledger-verification.md):
 * - `ledger_entries.status` pending | verified | rejected, with `reason` (stable snake_case), `confirmations`
 *   seen at the last check, `verified_at`, the matched Transfer's `log_index`, and the verifier's schedule
 *   (`attempts`, `next_check_at`, `checked_at`). Every row present when this runs becomes `pending`: nothing
 *   self-reported before it is trusted, the verifier checks it like a new report.
 * - A transaction belongs to the seller it paid, whoever reported it first: UNIQUE (tx_hash) becomes UNIQUE
 *   (seller_id, tx_hash) (a seller's reports stay idempotent), and one Transfer log can back one verified row
 *   only (partial UNIQUE (network, tx_hash, log_index) WHERE verified).
 * - `sellers_pay_to`: the addresses a seller proved it receives payments at (one signature each).
 * - The rollups (seller_payables, seller_revenue_days) count a row when it becomes verified — on an INSERT of a
 *   verified row or the UPDATE pending → verified — never a pending or rejected one; a verified row is final
 *   (a trigger refuses to change its status, seller, amount, mode, endpoint or time).
 * - The rollups are rebuilt: revenue days start empty (every row is pending). What was already paid out
 *   cannot be taken back: it stays paid, is kept as `advance_micro` (paid before it was verified), and the
 *   first verified earnings cover it before anything accrues again — so a legacy row that was flushed and
 *   then verifies is not paid twice, and one that never verifies stays visible as an uncovered advance.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'LOCK TABLE ledger_entries, payout_flushes, seller_payables, seller_revenue_days IN SHARE ROW EXCLUSIVE MODE',
  );
  await knex.schema.alterTable('ledger_entries', (t) => {
    t.string('status', 16).notNullable().defaultTo('pending');
    t.string('reason', 64);
    t.integer('confirmations');
    t.integer('log_index');
    t.timestamp('verified_at', { useTz: true });
    t.timestamp('checked_at', { useTz: true });
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_check_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_status_check CHECK (status IN ('pending', 'verified', 'rejected'))`,
  );
  await knex.raw(`UPDATE ledger_entries SET reason = 'awaiting_verification'`);
  await knex.raw('ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_tx_hash_unique');
  await knex.raw(
    'ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_seller_tx_unique UNIQUE (seller_id, tx_hash)',
  );
  await knex.raw(
    `CREATE UNIQUE INDEX ledger_entries_verified_transfer_unique ON ledger_entries (network, tx_hash, log_index) WHERE status = 'verified'`,
  );
  // The verifier's queue, and a seller's rows (pending or rejected) the rollups do not count: what is still
  // pending, and whether an endpoint has rows its revenue days do not show.
  await knex.raw(
    `CREATE INDEX ledger_entries_pending_queue ON ledger_entries (next_check_at) WHERE status = 'pending'`,
  );
  await knex.raw(
    `CREATE INDEX ledger_entries_unverified ON ledger_entries (seller_id, created_at) WHERE status <> 'verified'`,
  );

  await knex.schema.createTable('sellers_pay_to', (t) => {
    t.string('seller_id', 40).notNullable().references('id').inTable('sellers');
    t.specificType('address', 'char(42)').notNullable(); // lower-case
    t.text('signature').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.primary(['seller_id', 'address']);
  });

  await knex.schema.alterTable('seller_payables', (t) => {
    t.bigInteger('advance_micro').notNullable().defaultTo(0);
  });
  await knex.raw(`
    DROP TRIGGER ledger_entries_payables ON ledger_entries;
    DROP TRIGGER ledger_entries_revenue_days ON ledger_entries;
    CREATE OR REPLACE FUNCTION seller_payables_earned() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE advance bigint; covered bigint := 0;
    BEGIN
      -- Paid out before it was verified (rows older than verification): the first verified earnings cover it.
      SELECT advance_micro INTO advance FROM seller_payables WHERE seller_id = NEW.seller_id FOR UPDATE;
      IF advance > 0 THEN
        covered := LEAST(advance, NEW.amount_micro);
        UPDATE seller_payables SET advance_micro = advance_micro - covered WHERE seller_id = NEW.seller_id;
      END IF;
      IF NEW.amount_micro > covered THEN
        INSERT INTO seller_payables (seller_id, earned_micro) VALUES (NEW.seller_id, NEW.amount_micro - covered)
          ON CONFLICT (seller_id) DO UPDATE SET earned_micro = seller_payables.earned_micro + EXCLUDED.earned_micro;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER ledger_entries_payables AFTER INSERT ON ledger_entries
      FOR EACH ROW WHEN (NEW.payout_mode = 'platform_mor' AND NEW.status = 'verified') EXECUTE FUNCTION seller_payables_earned();
    CREATE TRIGGER ledger_entries_payables_verified AFTER UPDATE OF status ON ledger_entries
      FOR EACH ROW WHEN (OLD.status <> 'verified' AND NEW.status = 'verified' AND NEW.payout_mode = 'platform_mor') EXECUTE FUNCTION seller_payables_earned();
    CREATE TRIGGER ledger_entries_revenue_days AFTER INSERT ON ledger_entries
      FOR EACH ROW WHEN (NEW.status = 'verified') EXECUTE FUNCTION seller_revenue_days_add();
    CREATE TRIGGER ledger_entries_revenue_days_verified AFTER UPDATE OF status ON ledger_entries
      FOR EACH ROW WHEN (OLD.status <> 'verified' AND NEW.status = 'verified') EXECUTE FUNCTION seller_revenue_days_add();
    CREATE FUNCTION ledger_entries_verified_final() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.status IS DISTINCT FROM OLD.status OR NEW.seller_id IS DISTINCT FROM OLD.seller_id OR NEW.amount_micro IS DISTINCT FROM OLD.amount_micro
         OR NEW.payout_mode IS DISTINCT FROM OLD.payout_mode OR NEW.endpoint_id IS DISTINCT FROM OLD.endpoint_id OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
        RAISE EXCEPTION 'a verified ledger entry is final (%)', OLD.id USING ERRCODE = 'check_violation';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER ledger_entries_verified_final BEFORE UPDATE ON ledger_entries
      FOR EACH ROW WHEN (OLD.status = 'verified') EXECUTE FUNCTION ledger_entries_verified_final();
  `);
  // Every row is pending now: nothing is earned or counted yet; what was paid stays paid, as an advance.
  await knex.raw('DELETE FROM seller_revenue_days');
  await knex.raw('UPDATE seller_payables SET earned_micro = paid_micro, advance_micro = paid_micro');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'LOCK TABLE ledger_entries, payout_flushes, seller_payables, seller_revenue_days IN SHARE ROW EXCLUSIVE MODE',
  );
  // Back to "every row counts": rebuilt as migrations 20261125160000 and 20261125170000 backfilled them.
  await knex.raw(`
    DROP TRIGGER ledger_entries_verified_final ON ledger_entries;
    DROP FUNCTION ledger_entries_verified_final();
    DROP TRIGGER ledger_entries_payables ON ledger_entries;
    DROP TRIGGER ledger_entries_payables_verified ON ledger_entries;
    DROP TRIGGER ledger_entries_revenue_days ON ledger_entries;
    DROP TRIGGER ledger_entries_revenue_days_verified ON ledger_entries;
    CREATE OR REPLACE FUNCTION seller_payables_earned() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO seller_payables (seller_id, earned_micro) VALUES (NEW.seller_id, NEW.amount_micro)
        ON CONFLICT (seller_id) DO UPDATE SET earned_micro = seller_payables.earned_micro + EXCLUDED.earned_micro;
      RETURN NULL;
    END $$;
    CREATE TRIGGER ledger_entries_payables AFTER INSERT ON ledger_entries
      FOR EACH ROW WHEN (NEW.payout_mode = 'platform_mor') EXECUTE FUNCTION seller_payables_earned();
    CREATE TRIGGER ledger_entries_revenue_days AFTER INSERT ON ledger_entries
      FOR EACH ROW EXECUTE FUNCTION seller_revenue_days_add();
  `);
  await knex.raw('DELETE FROM seller_revenue_days');
  await knex.raw(`
    INSERT INTO seller_revenue_days (seller_id, day, endpoint_key, total_micro, entries)
    SELECT seller_id, (created_at AT TIME ZONE 'UTC')::date, COALESCE(endpoint_id, ''), sum(amount_micro), count(*)
      FROM ledger_entries GROUP BY 1, 2, 3`);
  await knex.raw(`
    UPDATE seller_payables p SET earned_micro = GREATEST(p.paid_micro, COALESCE((SELECT sum(amount_micro) FROM ledger_entries e WHERE e.seller_id = p.seller_id AND e.payout_mode = 'platform_mor'), 0))`);
  await knex.schema.alterTable('seller_payables', (t) => t.dropColumn('advance_micro'));
  await knex.schema.dropTableIfExists('sellers_pay_to');
  // Rows of one transaction reported by several sellers cannot all keep UNIQUE (tx_hash): the verified one (or the oldest) stays.
  await knex.raw(`
    DELETE FROM ledger_entries e USING ledger_entries o
     WHERE e.tx_hash = o.tx_hash AND e.id <> o.id
       AND (CASE WHEN o.status = 'verified' THEN 0 ELSE 1 END, o.created_at, o.id) < (CASE WHEN e.status = 'verified' THEN 0 ELSE 1 END, e.created_at, e.id)`);
  await knex.raw('DROP INDEX ledger_entries_unverified');
  await knex.raw('DROP INDEX ledger_entries_pending_queue');
  await knex.raw('DROP INDEX ledger_entries_verified_transfer_unique');
  await knex.raw('ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_seller_tx_unique');
  await knex.raw('ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_tx_hash_unique UNIQUE (tx_hash)');
  await knex.raw('ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_status_check');
  await knex.schema.alterTable('ledger_entries', (t) => {
    for (const c of [
      'status',
      'reason',
      'confirmations',
      'log_index',
      'verified_at',
      'checked_at',
      'attempts',
      'next_check_at',
    ])
      t.dropColumn(c);
  });
}
