/**
 * When each proof of control is fetched again (src/api/sellers/proofs/): `sellers.origin_recheck_at` (the seller's
 * origin), `gate_addresses.url_recheck_at` (the gate's URL) and `base_domain_recheck_at` (its base domain). Each is
 * the time the proof is next due, or, while a process re-checks it, the end of that process's lease (claimed with
 * FOR UPDATE SKIP LOCKED: two API processes never fetch one proof at once). Null: due one interval
 * (TREASURY_PROOF_RECHECK_SECONDS) after the proof's own timestamp — a fresh proof clears it. A re-check that proves
 * the file again refreshes `verified_at` / `base_domain_verified_at` (they mean "last proven at"); one that
 * withdraws it sets that timestamp null, as an unproven row has it.
 *
 * Rows proven before this migration are spread over the next day (the default interval), not all due at the first
 * start. The partial indexes serve the claim (proven rows only, by when they are due). No CHECK ties a re-check time
 * to its proof: a changed origin or URL clears the proof alone, and an unproven row is never claimed.
 * Down drops the indexes and the columns.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE sellers ADD COLUMN origin_recheck_at timestamptz NULL;
    ALTER TABLE gate_addresses
      ADD COLUMN url_recheck_at timestamptz NULL,
      ADD COLUMN base_domain_recheck_at timestamptz NULL;
    UPDATE sellers SET origin_recheck_at = now() + random() * interval '1 day' WHERE verified_at IS NOT NULL;
    UPDATE gate_addresses SET url_recheck_at = now() + random() * interval '1 day' WHERE verified_at IS NOT NULL;
    UPDATE gate_addresses SET base_domain_recheck_at = now() + random() * interval '1 day'
      WHERE base_domain_verified_at IS NOT NULL;
    CREATE INDEX sellers_origin_recheck ON sellers (origin_recheck_at) WHERE verified_at IS NOT NULL;
    CREATE INDEX gate_addresses_url_recheck ON gate_addresses (url_recheck_at) WHERE verified_at IS NOT NULL;
    CREATE INDEX gate_addresses_base_domain_recheck ON gate_addresses (base_domain_recheck_at)
      WHERE base_domain_verified_at IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS gate_addresses_base_domain_recheck;
    DROP INDEX IF EXISTS gate_addresses_url_recheck;
    DROP INDEX IF EXISTS sellers_origin_recheck;
    ALTER TABLE gate_addresses DROP COLUMN base_domain_recheck_at, DROP COLUMN url_recheck_at;
    ALTER TABLE sellers DROP COLUMN origin_recheck_at;
  `);
}
