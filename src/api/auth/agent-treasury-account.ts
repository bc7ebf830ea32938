/**
 * The Treasury account of an agent, remembered per database (per knex instance) once read: an agent's
 * `treasury_account_id` is set when the agent is created and never changed (no statement updates or deletes
 * an `agents` row), so what was read stays true. An agent PAT's payment asked it on every request; now the
 * first one reads it.
 *
 * Defends: nothing on its own — whether the bearer is live (revoked, expired, its ancestors) is decided by
 * ./authenticator.ts on every request before this is asked; only the agent → account mapping is remembered.
 * Does not defend: a future change that moves an agent to another Treasury account would have to forget the
 * agent here first.
 */
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';

const MAX_REMEMBERED_AGENTS = 10_000;

const byDatabase = new WeakMap<Knex, LRUCache<string, string>>();

function memoryOf(knex: Knex): LRUCache<string, string> {
  let memory = byDatabase.get(knex);
  if (!memory) {
    memory = new LRUCache<string, string>({ max: MAX_REMEMBERED_AGENTS });
    byDatabase.set(knex, memory);
  }
  return memory;
}

/** The agent's Treasury account id, or undefined when there is no such agent (never remembered). */
export async function agentTreasuryAccount(knex: Knex, agentId: string): Promise<string | undefined> {
  const memory = memoryOf(knex);
  const known = memory.get(agentId);
  if (known !== undefined) return known;
  const agent = (await knex('agents').where({ id: agentId }).first('treasury_account_id')) as
    { treasury_account_id: string } | undefined;
  if (agent) memory.set(agentId, agent.treasury_account_id);
  return agent?.treasury_account_id;
}
