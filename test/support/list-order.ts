/**
 * The ids of a table's rows in the order the paged lists give them (created_at, then id, both ascending or
 * both descending), read straight from PostgreSQL: what a list through the API or the CLI must match.
 */
import type { Knex } from '../../src/api/db/knex-client.js';

export async function idsInListOrder(
  knex: Knex,
  table: string,
  where: Record<string, unknown>,
  order: 'asc' | 'desc' = 'asc',
): Promise<string[]> {
  return (await knex(table)
    .where(where)
    .orderBy([
      { column: 'created_at', order },
      { column: 'id', order },
    ])
    .pluck('id')) as string[];
}
