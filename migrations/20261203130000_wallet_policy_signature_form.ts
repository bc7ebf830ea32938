/**
 * `wallets.policy_signature_form`: the EIP-712 form the stored owner-signed document's signature is over
 * (policy/signed-policy.ts; docs/adr/0012-owner-signed-policies.md) — the policy's hash (`policy_hash`) or its
 * canonical JSON spelled out (`policy_text`). The API's copy of the document, as the signer accepted it, can then be
 * checked again without trying both forms. Null on the rows stored before it (all of the hash form) and on a wallet
 * without a signed document. A nullable column without a default: no table rewrite.
 *
 * Defends: a form the API does not know; the text form beside anything but a 65-byte signature (it is EIP-712's
 * only; a null signature passes, as CHECK passes on null). Down drops the column.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `ALTER TABLE wallets ADD COLUMN policy_signature_form text NULL
       CONSTRAINT wallets_policy_signature_form_check
       CHECK (policy_signature_form IN ('policy_hash', 'policy_text')
              AND (policy_signature_form = 'policy_hash' OR length(policy_signature) = 132))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE wallets DROP COLUMN IF EXISTS policy_signature_form');
}
