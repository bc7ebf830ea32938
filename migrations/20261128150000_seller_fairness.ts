/**
 * One seller cannot degrade the others (docs/security-model.md, "Tenant isolation: sellers"):
 * - `sellers.endpoints_version`, raised by statement triggers on every INSERT, UPDATE and DELETE of the
 *   seller's endpoints, in the same transaction: the API keeps each seller's endpoints compiled for ledger
 *   route matching and rebuilds them only when this number moved (src/api/services/endpoint-matcher-cache.ts).
 * - `ledger_entries_pending_by_seller` (seller_id, next_check_at, id) WHERE pending: the verifier's claim takes
 *   due rows seller by seller in turns (a window over this order), and a report counts the seller's pending
 *   rows against its cap, both from this index only.
 * Building the index holds writes to ledger_entries for its duration.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sellers ADD COLUMN endpoints_version bigint NOT NULL DEFAULT 0');
  await knex.raw(`
    CREATE FUNCTION sellers_endpoints_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE sellers SET endpoints_version = endpoints_version + 1
       WHERE id IN (SELECT DISTINCT seller_id FROM changed_endpoints);
      RETURN NULL;
    END $$;
    CREATE TRIGGER endpoints_version_insert AFTER INSERT ON endpoints
      REFERENCING NEW TABLE AS changed_endpoints FOR EACH STATEMENT EXECUTE FUNCTION sellers_endpoints_changed();
    CREATE TRIGGER endpoints_version_update AFTER UPDATE ON endpoints
      REFERENCING NEW TABLE AS changed_endpoints FOR EACH STATEMENT EXECUTE FUNCTION sellers_endpoints_changed();
    CREATE TRIGGER endpoints_version_delete AFTER DELETE ON endpoints
      REFERENCING OLD TABLE AS changed_endpoints FOR EACH STATEMENT EXECUTE FUNCTION sellers_endpoints_changed();
  `);
  await knex.raw(
    `CREATE INDEX ledger_entries_pending_by_seller ON ledger_entries (seller_id, next_check_at, id) WHERE status = 'pending'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS ledger_entries_pending_by_seller');
  await knex.raw(`
    DROP TRIGGER endpoints_version_insert ON endpoints;
    DROP TRIGGER endpoints_version_update ON endpoints;
    DROP TRIGGER endpoints_version_delete ON endpoints;
    DROP FUNCTION sellers_endpoints_changed();
  `);
  await knex.raw('ALTER TABLE sellers DROP COLUMN endpoints_version');
}
