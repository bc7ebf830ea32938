/**
 * A session records what it was made from: `session_origin` is `sign_in` (a SIWE / SIWS sign-in, the
 * owner's proof) or `pat_exchange` (POST /v1/identity/exchange-pat), and an exchanged session names the
 * PAT it came from in `parent_token_id`. The powers of a session follow from these (docs/security-model.md):
 * an exchanged one acts as its PAT's agent only, and dies with that PAT.
 *
 * Sessions issued before this migration recorded nothing, so nobody can tell an exchanged one from a
 * sign-in: they are revoked here (the CLI renews its session silently with the agent PAT; an owner signs
 * in again). Non-session tokens keep both columns NULL.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_tokens', (t) => {
    t.string('session_origin', 16).nullable();
    t.string('parent_token_id', 40).nullable().references('id').inTable('api_tokens');
  });
  await knex.raw("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE kind = 'session'");
  // COALESCE: a NULL origin must fail the check, not pass it as unknown.
  await knex.raw(`ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_session_origin CHECK (
    CASE WHEN kind = 'session' THEN revoked_at IS NOT NULL OR COALESCE(session_origin IN ('sign_in', 'pat_exchange'), false)
    ELSE session_origin IS NULL END
  )`);
  await knex.raw(`ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_exchange_parent CHECK (
    (session_origin IS NOT DISTINCT FROM 'pat_exchange') = (parent_token_id IS NOT NULL)
  )`);
  // Revoking a PAT revokes its sessions by this index; partial, as only exchanged sessions have a parent.
  await knex.raw(
    'CREATE INDEX api_tokens_parent_token_id ON api_tokens (parent_token_id) WHERE parent_token_id IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS api_tokens_parent_token_id');
  await knex.raw('ALTER TABLE api_tokens DROP CONSTRAINT IF EXISTS api_tokens_exchange_parent');
  await knex.raw('ALTER TABLE api_tokens DROP CONSTRAINT IF EXISTS api_tokens_session_origin');
  await knex.schema.alterTable('api_tokens', (t) => {
    t.dropColumn('parent_token_id');
    t.dropColumn('session_origin');
  });
}
