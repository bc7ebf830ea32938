/**
 * An account's gate and its public address (docs/gate.md#the-gates-public-address): the base URL the account's
 * treasury-gate is reached at, the token the platform issued to the account (served by the gate at
 * `/.well-known/xx-gate-verification.txt`), the CAIP-2 network the gate sells on (its GATE_NETWORK: the catalogue
 * lists the gate's sellers only on that network), and when the platform last fetched the token from that URL.
 * One row per account: every gate PAT of the account names the same address (the last one set wins, and must be
 * proven again). The public catalogue lists an account's managed-proxy sellers only at a verified address.
 *
 * CHECK gate_addresses_bounded: the URL is http(s), at most 2048 characters; the network an `eip155:` id; the
 * token is `xx-gate-` and 32 hex digits. Rows go with their account.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE gate_addresses (
      account_id varchar(40) PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
      url varchar(2048) NOT NULL,
      network varchar(64) NOT NULL,
      verification_token varchar(64) NOT NULL,
      verified_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT gate_addresses_bounded CHECK (
        (url LIKE 'http://%' OR url LIKE 'https://%') AND length(url) <= 2048
        AND network ~ '^eip155:[1-9][0-9]{0,15}$'
        AND verification_token ~ '^xx-gate-[0-9a-f]{32}$'
      )
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE gate_addresses');
}
