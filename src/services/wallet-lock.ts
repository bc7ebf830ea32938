/**
 * Per-wallet serialisation: a transaction-scoped advisory lock keyed on the wallet id. Every operation that
 * changes a wallet's keys, status or spend takes it first, so replicas of the API serialise on PostgreSQL.
 */
import type { Knex } from 'knex';

export async function lockWallet(trx: Knex.Transaction, walletId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 7))', [`wallet:${walletId}`]);
}
