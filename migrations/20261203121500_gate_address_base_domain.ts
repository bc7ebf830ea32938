/**
 * `gate_addresses.base_domain` and `base_domain_verified_at` (docs/gate.md#the-gates-public-address): the gate's
 * GATE_BASE_DOMAIN as it last named it (its sellers are reached at `<slug>.<base_domain>` too), and when the
 * platform last fetched the account's token from a random name under it (the URL's scheme and port). A payee of
 * the account's managed-proxy sellers is then bound to those host-routed names as well
 * (src/api/pay/challenge-origin-binding.ts).
 *
 * CHECK gate_addresses_base_domain_bounded: at most 189 characters (a 63-character slug and its dot under it stay within
 * DNS's 253) of lower-case DNS labels (two or more, each
 * 1 to 63 letters, digits and inner dashes, the last starting with a letter: never an IP literal), as the shared
 * schema (src/shared/gate-address-schema.ts) takes them; and no proof without a domain. Both columns are null for
 * existing rows (no domain named). The pattern says `{0,1}` for an optional group: knex reads `?` as a binding.
 * Down drops them.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE gate_addresses
      ADD COLUMN base_domain varchar(253) NULL,
      ADD COLUMN base_domain_verified_at timestamptz NULL,
      ADD CONSTRAINT gate_addresses_base_domain_bounded CHECK (
        (base_domain IS NULL AND base_domain_verified_at IS NULL)
        OR (
          base_domain IS NOT NULL AND length(base_domain) BETWEEN 3 AND 189
          AND base_domain ~ '^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9]){0,1}\\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9]){0,1}$'
        )
      )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE gate_addresses
      DROP CONSTRAINT gate_addresses_base_domain_bounded,
      DROP COLUMN base_domain_verified_at,
      DROP COLUMN base_domain`);
}
