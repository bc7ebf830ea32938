/**
 * Owner-signed policies (docs/adr/0012-owner-signed-policies.md), the API's side:
 * - `wallets`: the signed document the signer accepted for the wallet's current policy — its version, when it
 *   was signed, the signature and the authority the signer named (all null: no signed policy, only the
 *   signer's ceilings). The signer's own store is the authority on them; these columns are the API's copy,
 *   for wallet views and the audit trail.
 * - `api_tokens`: a sign-in session's SIWE message and signature (null for every other credential and for a
 *   SIWS sign-in), so that an agent made later by that session names its owner to the signer with the owner's
 *   own proof. A signature is not a secret, but it is never logged.
 * - `policy_decisions.decided_by`: who refused a payment — the API's policy check (`api`) or the signer's
 *   evaluation of the signed policy (`signer`).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('wallets', (t) => {
    t.bigInteger('policy_version').nullable();
    t.bigInteger('policy_issued_at').nullable();
    t.text('policy_signature').nullable();
    t.text('policy_authority_kind').nullable();
    t.text('policy_authority_address').nullable();
  });
  await knex.raw(
    `ALTER TABLE wallets ADD CONSTRAINT wallets_policy_document_whole CHECK (
       (policy_version IS NULL) = (policy_issued_at IS NULL) AND (policy_version IS NULL) = (policy_signature IS NULL)
       AND (policy_authority_kind IS NULL OR policy_authority_kind IN ('owner', 'approver', 'first_signer')))`,
  );
  await knex.schema.alterTable('api_tokens', (t) => {
    t.text('sign_in_message').nullable();
    t.text('sign_in_signature').nullable();
  });
  await knex.raw(
    `ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_sign_in_proof_whole CHECK ((sign_in_message IS NULL) = (sign_in_signature IS NULL))`,
  );
  await knex.raw(
    `ALTER TABLE policy_decisions ADD COLUMN decided_by text NOT NULL DEFAULT 'api' CHECK (decided_by IN ('api', 'signer'))`,
  );
  // Sampled like every other column of the pay tables (3,000 rows per ANALYZE; test/integration/db/pay-table-storage.test.ts).
  await knex.raw('ALTER TABLE policy_decisions ALTER COLUMN decided_by SET STATISTICS 10');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE policy_decisions DROP COLUMN IF EXISTS decided_by');
  await knex.raw('ALTER TABLE api_tokens DROP CONSTRAINT IF EXISTS api_tokens_sign_in_proof_whole');
  await knex.schema.alterTable('api_tokens', (t) => {
    t.dropColumn('sign_in_message');
    t.dropColumn('sign_in_signature');
  });
  await knex.raw('ALTER TABLE wallets DROP CONSTRAINT IF EXISTS wallets_policy_document_whole');
  await knex.schema.alterTable('wallets', (t) => {
    t.dropColumn('policy_version');
    t.dropColumn('policy_issued_at');
    t.dropColumn('policy_signature');
    t.dropColumn('policy_authority_kind');
    t.dropColumn('policy_authority_address');
  });
}
