/**
 * A page of the rows one account owns in a table (its agents, its sellers), oldest first, read as every paged
 * list reads (src/api/db/keyset-cursor.ts: the cursor checked against the table's id pattern).
 *
 * Defends: one account's list reaching another account's rows (the filter is the account id, always). Does
 * not defend: a table without an `account_id` column (the query fails).
 */
import type { Knex } from 'knex';
import { readKeysetPage, type PageRequest } from './keyset-cursor.js';

export function readAccountPage<R extends { created_at: Date; id: string }>(
  knex: Knex,
  table: 'agents' | 'sellers',
  accountId: string,
  request: PageRequest,
  idPattern: RegExp,
): Promise<{ page: R[]; nextCursor: string | null }> {
  return readKeysetPage<R>(knex(table).where({ account_id: accountId }), request, idPattern);
}
