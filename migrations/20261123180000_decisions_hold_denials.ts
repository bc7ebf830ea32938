/**
 * policy_decisions holds denials — the `pd_…` decision a 403 names (docs/adr/0003-policy-engine.md, "Decisions").
 * An allowed payment's decision is recorded by its authorization row (decision_id; the headroom in its
 * response) and its audit row (payment.reserved, with the decision id), so it is no longer written a third
 * time: per payment one heap row, two index entries and two foreign-key row locks fewer. The authorization's
 * decision_id therefore no longer references policy_decisions. Rows written before stay as they are.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('authorizations', (t) => {
    t.dropForeign(['decision_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  // Authorizations written meanwhile name decisions that were never rows: give them one before the key returns.
  await knex.raw(`
    INSERT INTO policy_decisions (id, wallet_id, outcome, kind, amount_micro, to_address, capability, violations, headroom, created_at)
    SELECT a.decision_id, a.wallet_id, 'allow', a.kind, a.amount_micro, a.to_address, a.capability, '[]'::jsonb, COALESCE(a.response -> 'headroom', '{}'::jsonb), a.created_at
      FROM authorizations a
     WHERE NOT EXISTS (SELECT 1 FROM policy_decisions d WHERE d.id = a.decision_id)`);
  await knex.schema.alterTable('authorizations', (t) => {
    t.foreign('decision_id').references('id').inTable('policy_decisions');
  });
}
