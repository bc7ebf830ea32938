/**
 * The wallet count of an owner, read under its lock (the rule it feeds is ../wallet-bounds.ts): who owns a
 * Treasury account's wallets (an agent's platform account, else the account itself), a transaction-scoped
 * advisory lock on that owner held until the wallet's row commits, and each count stopping at its bound + 1.
 *
 * Defends: concurrent creations of one owner overshooting its bound (they wait here for each other; other
 * owners' do not). Does not defend: the bound itself (../wallet-bounds.ts refuses over it).
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { WalletBoundsConfig } from '../../config/app-config.js';
import type { WalletCounts, WalletOwner } from '../wallet-bounds.js';

/**
 * Who owns the Treasury account's wallets: the agent whose account it is (and that agent's platform account), if
 * any; else the platform itself (its own account, owner_type `platform`) or the account alone.
 */
export async function walletOwnerOf(trx: Knex.Transaction, treasuryAccountId: string): Promise<WalletOwner> {
  const row = (await trx('treasury_accounts as t')
    .leftJoin('agents as a', 'a.treasury_account_id', 't.id')
    .where('t.id', treasuryAccountId)
    .first('t.owner_type', 'a.account_id')) as { owner_type: string; account_id: string | null } | undefined;
  if (row?.account_id) return { kind: 'agent', treasuryAccountId, platformAccountId: row.account_id };
  if (row?.owner_type === 'platform') return { kind: 'platform', treasuryAccountId };
  return { kind: 'treasury', treasuryAccountId };
}

/** The advisory-lock key of an owner's wallet count: the first 8 bytes of SHA-256("wallet_count:" + id). */
function countLockKey(owner: Exclude<WalletOwner, { kind: 'platform' }>): bigint {
  const id = owner.kind === 'agent' ? owner.platformAccountId : owner.treasuryAccountId;
  return createHash('sha256').update(`wallet_count:${id}`).digest().readBigInt64BE(0);
}

/**
 * Locks the owner's wallet count until `trx` ends and reads it, each count stopping at its bound + 1 (the
 * answer needs no more). Creations of the same account wait here for each other; other accounts' do not. The
 * platform's own account is neither locked nor counted (../wallet-bounds.ts).
 */
export async function lockWalletCounts(
  trx: Knex.Transaction,
  owner: WalletOwner,
  bounds: WalletBoundsConfig,
): Promise<WalletCounts> {
  if (owner.kind === 'platform') return { agent: undefined, account: undefined };
  await trx.raw(`SELECT pg_advisory_xact_lock(${countLockKey(owner).toString()})`);
  if (owner.kind === 'treasury')
    return { agent: undefined, account: await countActive(trx, [owner.treasuryAccountId], bounds.maxPerAccount + 1) };
  const own = await countActive(trx, [owner.treasuryAccountId], bounds.maxPerAgent + 1);
  const accounts = trx('agents').where({ account_id: owner.platformAccountId }).select('treasury_account_id');
  return { agent: own, account: await countActive(trx, accounts, bounds.maxPerAccount + 1) };
}

async function countActive(
  trx: Knex.Transaction,
  accountIds: readonly string[] | Knex.QueryBuilder,
  atMost: number,
): Promise<number> {
  const capped = trx('wallets')
    .whereIn('account_id', accountIds as string[])
    .andWhere({ status: 'active' })
    .select(trx.raw('1'))
    .limit(atMost);
  const row = (await trx.from(capped.as('w')).count({ n: '*' }).first()) as { n: string | number };
  return Number(row.n);
}
