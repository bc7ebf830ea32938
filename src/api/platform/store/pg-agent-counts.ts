/**
 * The agent count of a platform account, read under its lock (the rule it feeds is ../agent-bounds.ts): a
 * transaction-scoped advisory lock on the account, held until the new agent's rows commit, and the count stopping
 * at the bound.
 *
 * Defends: concurrent spawns of one account overshooting its bound (they wait here for each other; other
 * accounts' do not). Does not defend: the bound itself (../agent-bounds.ts refuses at it).
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

/** The advisory-lock key of an account's agent count: the first 8 bytes of SHA-256("agent_count:" + id). */
function countLockKey(accountId: string): bigint {
  return createHash('sha256').update(`agent_count:${accountId}`).digest().readBigInt64BE(0);
}

/** Locks the account's agent count until `trx` ends and reads its agents, stopping at `atMost` (the answer needs no more). */
export async function lockAgentCount(trx: Knex.Transaction, accountId: string, atMost: number): Promise<number> {
  await trx.raw(`SELECT pg_advisory_xact_lock(${countLockKey(accountId).toString()})`);
  const agents = trx('agents').where({ account_id: accountId }).select(trx.raw('1')).limit(atMost);
  const row = (await trx.from(agents.as('a')).count({ n: '*' }).first()) as { n: string | number };
  return Number(row.n);
}
