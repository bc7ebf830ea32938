/**
 * Linked sign-in identities (docs/security-model.md, "Sign In With Solana"): one seed, one account. A SIWE
 * sign-in may carry a SIWS attestation of the same seed's Solana key; that Solana address then becomes an
 * identity of the same account, so a later SIWS sign-in lands there. `identities` already holds one row per
 * (chain, address) (its PRIMARY KEY: an address is one account's, for ever); this records which rows were
 * linked to an existing account rather than created by their own first sign-in (`linked_at`), and refuses a
 * chain other than the two sign-ins verify.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('identities', (t) => {
    t.timestamp('linked_at', { useTz: true });
    t.index(['account_id']);
  });
  await knex.raw("ALTER TABLE identities ADD CONSTRAINT identities_chain CHECK (chain IN ('evm', 'solana'))");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE identities DROP CONSTRAINT IF EXISTS identities_chain');
  await knex.schema.alterTable('identities', (t) => {
    t.dropIndex(['account_id']);
    t.dropColumn('linked_at');
  });
}
