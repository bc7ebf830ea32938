/**
 * x402 `upto`: an authorization is either an EIP-3009 TransferWithAuthorization (`exact`) or a Permit2
 * PermitWitnessTransferFrom with the upto witness (`upto`). The two nonce spaces are distinct on-chain (the
 * token's EIP-3009 nonces, Permit2's bitmap), so the nonce is UNIQUE per (sender, scheme). A Permit2 nonce
 * (uint256) is stored as 0x + 64 hex like an EIP-3009 nonce; `value_raw` holds the signed maximum.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('authorizations', (t) => {
    t.string('scheme', 16).notNullable().defaultTo('exact');
  });
  await knex.raw(
    `ALTER TABLE authorizations ADD CONSTRAINT authorizations_scheme_check CHECK (scheme IN ('exact', 'upto'))`,
  );
  await knex.schema.alterTable('authorizations', (t) => {
    t.dropUnique(['from_address', 'nonce']);
    t.unique(['from_address', 'scheme', 'nonce'], { indexName: 'authorizations_from_address_scheme_nonce_unique' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DELETE FROM authorizations WHERE scheme = 'upto'`);
  await knex.schema.alterTable('authorizations', (t) => {
    t.dropUnique(['from_address', 'scheme', 'nonce'], 'authorizations_from_address_scheme_nonce_unique');
    t.unique(['from_address', 'nonce']);
  });
  await knex.raw('ALTER TABLE authorizations DROP CONSTRAINT authorizations_scheme_check');
  await knex.schema.alterTable('authorizations', (t) => {
    t.dropColumn('scheme');
  });
}
