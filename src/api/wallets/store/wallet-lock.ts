/**
 * Per-wallet serialisation: a transaction-scoped advisory lock keyed on the wallet id. Every operation that
 * changes a wallet's keys, status, policy or spend takes it first, so replicas of the API serialise on
 * PostgreSQL. The key is shared with the pay path's raw transaction (`walletLockKey`).
 */
import type { Knex } from 'knex';
import { walletLockKey } from '../../db/wallet-transaction.js';

export async function lockWallet(trx: Knex.Transaction, walletId: string): Promise<void> {
  await trx.raw(`SELECT pg_advisory_xact_lock(${walletLockKey(walletId).toString()})`);
}
