/**
 * The gate scope (docs/gate.md): a PAT may carry it, alone (`scope_type = 'gate'`, scoped to its account) or
 * beside a Treasury scope (`scope_type = 'treasury'`, `gate = true`) — one bearer for a gate that also pays.
 * Only PATs carry it, and only those two shapes: a CHECK refuses a gate flag on any other token, and a
 * `gate` scope_type without the flag. The gate's catalogue and ledger routes require the flag; every other
 * route checks scope_type as before, so a gate-only PAT reaches nothing else.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_tokens', (t) => {
    t.boolean('gate').notNullable().defaultTo(false);
  });
  await knex.raw(`ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_gate_scope CHECK (
    CASE WHEN gate THEN kind = 'pat' AND scope_type IN ('gate', 'treasury') AND account_id IS NOT NULL
    ELSE scope_type <> 'gate' END
  )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE scope_type = 'gate'");
  await knex.raw('ALTER TABLE api_tokens DROP CONSTRAINT IF EXISTS api_tokens_gate_scope');
  await knex.schema.alterTable('api_tokens', (t) => t.dropColumn('gate'));
}
