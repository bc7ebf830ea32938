/**
 * A seller's revenue per UTC day, endpoint and network (`seller_revenue_days.network`), so that a figure shown for
 * one network (the public catalogue's, src/api/discovery/discovery-store.ts) counts that network's payments only:
 * a testnet's free USDC is not revenue on a mainnet listing. Readers that sum every network (GET
 * /v1/ledger/revenue, whether an endpoint has ledger rows) read the same totals as before, summed over networks.
 *
 * - The primary key becomes (seller_id, day, endpoint_key, network); the trigger function both triggers run
 *   (`seller_revenue_days_add`, on an INSERT of a verified row and on pending → verified) writes the row's network.
 * - A verified ledger row's network is final too (`ledger_entries_verified_final`): the rollup counted it there.
 * - The rollup is rebuilt from the verified ledger rows — what the triggers have counted since migration
 *   20261125200400 (a ledger row is never deleted, and a verified one never changes) — with ledger_entries and
 *   seller_revenue_days locked against writes (SHARE ROW EXCLUSIVE), so no row is counted twice or missed.
 *
 * Down merges each day's networks back into one row (the totals kept) and restores both functions.
 */
import type { Knex } from 'knex';

/** The trigger function as migration 20261125170000 made it (one row per seller, day and endpoint). */
const ADD_WITHOUT_NETWORK = `
  CREATE OR REPLACE FUNCTION seller_revenue_days_add() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO seller_revenue_days (seller_id, day, endpoint_key, total_micro, entries)
      VALUES (NEW.seller_id, (NEW.created_at AT TIME ZONE 'UTC')::date, COALESCE(NEW.endpoint_id, ''), NEW.amount_micro, 1)
      ON CONFLICT (seller_id, day, endpoint_key) DO UPDATE
        SET total_micro = seller_revenue_days.total_micro + EXCLUDED.total_micro, entries = seller_revenue_days.entries + 1;
    RETURN NULL;
  END $$;`;

const ADD_WITH_NETWORK = `
  CREATE OR REPLACE FUNCTION seller_revenue_days_add() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO seller_revenue_days (seller_id, day, endpoint_key, network, total_micro, entries)
      VALUES (NEW.seller_id, (NEW.created_at AT TIME ZONE 'UTC')::date, COALESCE(NEW.endpoint_id, ''), NEW.network, NEW.amount_micro, 1)
      ON CONFLICT (seller_id, day, endpoint_key, network) DO UPDATE
        SET total_micro = seller_revenue_days.total_micro + EXCLUDED.total_micro, entries = seller_revenue_days.entries + 1;
    RETURN NULL;
  END $$;`;

/** A verified ledger row is final: as migration 20261125200400 made it, and with its network when `network`. */
const verifiedFinal = (network: boolean) => `
  CREATE OR REPLACE FUNCTION ledger_entries_verified_final() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.status IS DISTINCT FROM OLD.status OR NEW.seller_id IS DISTINCT FROM OLD.seller_id OR NEW.amount_micro IS DISTINCT FROM OLD.amount_micro
       OR NEW.payout_mode IS DISTINCT FROM OLD.payout_mode OR NEW.endpoint_id IS DISTINCT FROM OLD.endpoint_id OR NEW.created_at IS DISTINCT FROM OLD.created_at${
         network ? '\n       OR NEW.network IS DISTINCT FROM OLD.network' : ''
       } THEN
      RAISE EXCEPTION 'a verified ledger entry is final (%)', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE ledger_entries, seller_revenue_days IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(`
    ALTER TABLE seller_revenue_days DROP CONSTRAINT seller_revenue_days_pkey;
    DELETE FROM seller_revenue_days;
    ALTER TABLE seller_revenue_days ADD COLUMN network varchar(64) NOT NULL;
    ALTER TABLE seller_revenue_days ADD CONSTRAINT seller_revenue_days_pkey PRIMARY KEY (seller_id, day, endpoint_key, network);
  `);
  await knex.raw(ADD_WITH_NETWORK);
  await knex.raw(verifiedFinal(true));
  await knex.raw(`
    INSERT INTO seller_revenue_days (seller_id, day, endpoint_key, network, total_micro, entries)
    SELECT seller_id, (created_at AT TIME ZONE 'UTC')::date, COALESCE(endpoint_id, ''), network, sum(amount_micro), count(*)
      FROM ledger_entries WHERE status = 'verified' GROUP BY 1, 2, 3, 4`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE ledger_entries, seller_revenue_days IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(verifiedFinal(false));
  await knex.raw(ADD_WITHOUT_NETWORK);
  // One row per seller, day and endpoint again: the networks' rows are summed (the DELETE and the INSERT see
  // the same snapshot, so the INSERT adds up exactly the rows the DELETE removes).
  await knex.raw(`
    ALTER TABLE seller_revenue_days DROP CONSTRAINT seller_revenue_days_pkey;
    WITH gone AS (DELETE FROM seller_revenue_days RETURNING seller_id, day, endpoint_key, total_micro, entries)
    INSERT INTO seller_revenue_days (seller_id, day, endpoint_key, network, total_micro, entries)
    SELECT seller_id, day, endpoint_key, '', sum(total_micro), sum(entries) FROM gone GROUP BY 1, 2, 3;
    ALTER TABLE seller_revenue_days DROP COLUMN network;
    ALTER TABLE seller_revenue_days ADD CONSTRAINT seller_revenue_days_pkey PRIMARY KEY (seller_id, day, endpoint_key);
  `);
}
