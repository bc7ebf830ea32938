/**
 * The database refuses an audit row that does not extend its chain: row `seq` of a chain must name, as
 * `prev_hash`, the `hash` of that chain's row `seq − 1` (the genesis hash for `seq` 1). Together with the
 * UNIQUE (chain_key, seq) index this keeps every chain gap-free and unforked whoever writes to it.
 *
 * Defends: a writer that chains onto a row that is not there — a reservation whose commit was lost in a
 * database crash (reservations commit without waiting for the WAL flush, ADR 0007), while a writer still
 * remembers it as the chain's head — and any bug or hand-written INSERT that would leave a gap or a fork.
 * The check runs after the statement's rows are all in (an AFTER ROW trigger fires at the end of the
 * statement), so one statement may append several rows of one chain, in any order.
 * Does not defend: changes by a superuser who disables triggers; `npm run audit:verify` recomputes every
 * hash and still names the first broken row.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION audit_events_extend_chain() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.seq = 1 THEN
        IF NEW.prev_hash = repeat('0', 64) THEN RETURN NULL; END IF;
      ELSIF EXISTS (SELECT 1 FROM audit_events p WHERE p.chain_key = NEW.chain_key AND p.seq = NEW.seq - 1 AND p.hash = NEW.prev_hash) THEN
        RETURN NULL;
      END IF;
      RAISE EXCEPTION 'audit row % of chain % does not extend its chain', NEW.seq, NEW.chain_key
        USING ERRCODE = 'check_violation', CONSTRAINT = 'audit_events_extends_chain', TABLE = 'audit_events';
    END $$;
  `);
  await knex.raw(`
    CREATE TRIGGER audit_events_extends_chain AFTER INSERT ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_extend_chain();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS audit_events_extends_chain ON audit_events');
  await knex.raw('DROP FUNCTION IF EXISTS audit_events_extend_chain()');
}
