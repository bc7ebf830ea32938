/**
 * The live-PAT count of a holder, read under its lock (the rule it feeds is ../pat-bounds.ts): a
 * transaction-scoped advisory lock on the holder (a platform account, or a Treasury account of no agent for
 * its own Treasury PATs), held until the new PAT's row commits, and the count stopping at the bound.
 *
 * Defends: concurrent mints of one holder overshooting its bound (they wait here for each other; other
 * holders' do not). Does not defend: the bound itself (../pat-bounds.ts refuses at it).
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { PatHolder } from '../pat-bounds.js';

/** The advisory-lock key of a holder's PAT count: the first 8 bytes of SHA-256("pat_count:" + id). */
function countLockKey(holder: PatHolder): bigint {
  const id = holder.kind === 'account' ? holder.accountId : holder.treasuryAccountId;
  return createHash('sha256').update(`pat_count:${id}`).digest().readBigInt64BE(0);
}

/**
 * Locks the holder's PAT count until `trx` ends and reads its live PATs (not revoked, not expired at `now`,
 * not a spent single-use one), stopping at `atMost` (the answer needs no more).
 */
export async function lockLivePatCount(
  trx: Knex.Transaction,
  holder: PatHolder,
  now: Date,
  atMost: number,
): Promise<number> {
  await trx.raw(`SELECT pg_advisory_xact_lock(${countLockKey(holder).toString()})`);
  const pats = trx('api_tokens').where({ kind: 'pat' });
  if (holder.kind === 'account') pats.andWhere({ account_id: holder.accountId });
  else pats.andWhere({ scope_type: 'treasury', scope_id: holder.treasuryAccountId }).whereNull('account_id');
  const live = pats
    .whereNull('revoked_at')
    .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
    .andWhere((q) => q.where({ single_use: false }).orWhereNull('used_at'))
    .select(trx.raw('1'))
    .limit(atMost);
  const row = (await trx.from(live.as('p')).count({ n: '*' }).first()) as { n: string | number };
  return Number(row.n);
}
