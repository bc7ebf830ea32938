/**
 * The daily cap along an agent PAT's lineage, over PostgreSQL. The PATs made within an agent PAT
 * (`parent_pat_id`, recursively) spend from its daily total under its cap (src/api/auth/credential-chain.ts,
 * `spendingPatOf`), and each of their rows holds that cap (src/api/auth/credential-lineage.ts: a child of an
 * agent credential has exactly its parent's). A cap change writes the PAT and every PAT of that run below it in
 * one statement; a mint within an agent PAT reads its parent's cap when it writes the row. Both take a
 * transaction-scoped advisory lock on the agent first, so neither sees the other half done.
 *
 * Defends: a PAT listed (GET /v1/pats) with a cap its parent no longer has — a child shown capped at $5 while
 * its parent, and so its spending, is uncapped, or shown above its parent's lowered cap — after a cap change,
 * or a mint racing one. Does not defend: who may change a cap (../pat-service.ts), nor spending, which the pay
 * path checks against the topmost agent PAT's row whatever its children's say.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { MAX_LINEAGE_DEPTH } from '../../auth/credential-lineage.js';
import type { PatRow } from './platform-stores.js';

/** The advisory-lock key of an agent's PAT caps: the first 8 bytes of SHA-256("pat_caps:" + agent id). */
function capsLockKey(agentId: string): bigint {
  return createHash('sha256').update(`pat_caps:${agentId}`).digest().readBigInt64BE(0);
}

/** Serialises cap changes and mints within the agent's PATs until `trx` ends. */
export async function lockAgentCaps(trx: Knex.Transaction, agentId: string): Promise<void> {
  await trx.raw(`SELECT pg_advisory_xact_lock(${capsLockKey(agentId).toString()})`);
}

/**
 * The cap a new agent PAT within `parentId` stores, read under the agent's lock: the parent's own when the
 * parent is a PAT of the same agent, else `asked` (a PAT within the owner's session has its own cap).
 */
export async function capWithin(
  trx: Knex.Transaction,
  parentId: string,
  agentId: string,
  asked: bigint | null,
): Promise<string | null> {
  const parent = (await trx('api_tokens')
    .where({ id: parentId })
    .first('scope_type', 'scope_id', 'daily_cap_micro')) as
    { scope_type: string; scope_id: string; daily_cap_micro: string | null } | undefined;
  if (parent?.scope_type === 'agent' && parent.scope_id === agentId) return parent.daily_cap_micro;
  return asked === null ? null : asked.toString();
}

/**
 * Sets the daily cap of the agent PAT `patId` and of every PAT below it acting as the same agent (the run whose
 * spending it caps), in `trx` under the agent's lock; returns the PAT's row.
 */
export async function setRunCap(
  trx: Knex.Transaction,
  patId: string,
  agentId: string,
  dailyCapMicro: bigint | null,
): Promise<PatRow> {
  await lockAgentCaps(trx, agentId);
  const result = (await trx.raw(
    `WITH RECURSIVE run AS (
       SELECT id, 0 AS depth FROM api_tokens WHERE id = ? AND scope_type = 'agent' AND scope_id = ?
       UNION ALL
       SELECT t.id, r.depth + 1 FROM api_tokens t JOIN run r ON t.parent_token_id = r.id
        WHERE r.depth < ? AND t.scope_type = 'agent' AND t.scope_id = ?
     )
     UPDATE api_tokens SET daily_cap_micro = ?
      WHERE kind = 'pat' AND id IN (SELECT id FROM run) RETURNING *`,
    [patId, agentId, MAX_LINEAGE_DEPTH, agentId, dailyCapMicro === null ? null : dailyCapMicro.toString()],
  )) as { rows: PatRow[] };
  return result.rows.find((r) => r.id === patId)!;
}
