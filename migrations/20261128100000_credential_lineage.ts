/**
 * Credential lineage (docs/security-model.md, "Credential lineage"): `parent_token_id` names the credential
 * whose authority a credential was made with, for every kind — an exchanged session's PAT (as before), a
 * PAT minted by a Treasury api key, a single-use handoff PAT minted within an agent PAT. Roots (a sign-in
 * session, an operator-minted api key or PAT, a PAT an owner's sign-in session minted) have none.
 *
 * - The session-only CHECK of 20261125200100 is narrowed to sessions: a session has a parent exactly when it
 *   was exchanged; a PAT may have one.
 * - Orphans are repaired: a PAT without an account is attached to the platform account owning its Treasury
 *   account (agent → account) or to the account of the token that created it; a PAT created by another PAT
 *   or an api key gets that token as its parent, so it ends with it (and, if that parent has expired or was
 *   revoked, is refused from now on). Every repaired row is listed in `credential_lineage_repairs`
 *   (docs/operations.md).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE api_tokens DROP CONSTRAINT IF EXISTS api_tokens_exchange_parent');
  await knex.raw(`ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_session_parent CHECK (
    kind <> 'session' OR (session_origin IS NOT DISTINCT FROM 'pat_exchange') = (parent_token_id IS NOT NULL)
  )`);
  await knex.raw('ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_parent_not_self CHECK (parent_token_id <> id)');
  await knex.schema.createTable('credential_lineage_repairs', (t) => {
    t.string('token_id', 40).primary();
    t.string('account_id', 40);
    t.string('parent_token_id', 40);
    t.string('created_by', 64).notNullable();
    t.string('repair', 32).notNullable(); // account_attached | parent_attached | account_and_parent_attached
    t.timestamp('repaired_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`
    WITH orphans AS (
      SELECT t.id, t.created_by, t.account_id AS old_account, t.parent_token_id AS old_parent,
             COALESCE(t.account_id, ag.account_id, creator.account_id) AS new_account,
             CASE WHEN t.parent_token_id IS NULL AND creator.kind IN ('pat', 'api_key') THEN creator.id
                  ELSE t.parent_token_id END AS new_parent
        FROM api_tokens t
        LEFT JOIN agents ag ON t.scope_type = 'treasury' AND ag.treasury_account_id = t.scope_id
        LEFT JOIN api_tokens creator ON creator.id = t.created_by AND creator.id <> t.id
       WHERE t.kind = 'pat'
         AND (t.account_id IS NULL OR (t.parent_token_id IS NULL AND creator.kind IN ('pat', 'api_key')))
    ), repaired AS (
      UPDATE api_tokens t SET account_id = o.new_account, parent_token_id = o.new_parent
        FROM orphans o
       WHERE t.id = o.id
         AND (o.new_account IS DISTINCT FROM o.old_account OR o.new_parent IS DISTINCT FROM o.old_parent)
      RETURNING t.id, t.account_id, t.parent_token_id, t.created_by,
                o.new_account IS DISTINCT FROM o.old_account AS account_changed,
                o.new_parent IS DISTINCT FROM o.old_parent AS parent_changed
    )
    INSERT INTO credential_lineage_repairs (token_id, account_id, parent_token_id, created_by, repair)
    SELECT id, account_id, parent_token_id, created_by,
           CASE WHEN account_changed AND parent_changed THEN 'account_and_parent_attached'
                WHEN account_changed THEN 'account_attached' ELSE 'parent_attached' END
      FROM repaired`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('credential_lineage_repairs');
  await knex.raw('ALTER TABLE api_tokens DROP CONSTRAINT IF EXISTS api_tokens_parent_not_self');
  await knex.raw('ALTER TABLE api_tokens DROP CONSTRAINT IF EXISTS api_tokens_session_parent');
  await knex.raw("UPDATE api_tokens SET parent_token_id = NULL WHERE kind <> 'session'");
  await knex.raw(`ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_exchange_parent CHECK (
    (session_origin IS NOT DISTINCT FROM 'pat_exchange') = (parent_token_id IS NOT NULL)
  )`);
}
