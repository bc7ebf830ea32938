/**
 * ANALYZE samples 3,000 rows of the pay tables instead of 30,000: every column it still analyzes on
 * authorizations, audit_events and policy_decisions gets a statistics target of 10 (the sample is 300 rows
 * per unit of the largest target). Autovacuum analyzes a table each time 10 % of it changed, and above
 * 30,000 rows each analysis reads the full sample: measured on tables of 300,000 payments, authorizations
 * 580–730 → 39–56 ms, audit_events 250–370 → 34–55 ms per ANALYZE, work that otherwise lands on the pay
 * path's cores every few tens of seconds at 400 payments/s while the tables are young.
 *
 * Plans do not change: the pay path's statements are key and unique-index lookups; the sweep reads a BRIN
 * range of valid_before with status 'reserved' (rare, as ten MCVs still show); listings go by wallet_id and
 * created_at through their index. Ten histogram buckets and ten most common values are enough for those.
 */
import type { Knex } from 'knex';

const TABLES = ['authorizations', 'audit_events', 'policy_decisions'];
const TARGET = 10;

/** The analyzed columns of the pay tables that still have the server's default target. */
async function defaultTargetColumns(knex: Knex): Promise<Array<{ table: string; column: string }>> {
  const rows = (await knex.raw(
    `SELECT c.relname AS "table", a.attname AS "column" FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.relname = ANY (?) AND c.relnamespace = current_schema()::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
        AND (a.attstattarget IS NULL OR a.attstattarget < 0)
      ORDER BY 1, 2`,
    [TABLES],
  )) as { rows: Array<{ table: string; column: string }> };
  return rows.rows;
}

export async function up(knex: Knex): Promise<void> {
  for (const { table, column } of await defaultTargetColumns(knex))
    await knex.raw(`ALTER TABLE ?? ALTER COLUMN ?? SET STATISTICS ${TARGET}`, [table, column]);
}

export async function down(knex: Knex): Promise<void> {
  const rows = (await knex.raw(
    `SELECT c.relname AS "table", a.attname AS "column" FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.relname = ANY (?) AND c.relnamespace = current_schema()::regnamespace AND a.attnum > 0 AND NOT a.attisdropped AND a.attstattarget = ?`,
    [TABLES, TARGET],
  )) as { rows: Array<{ table: string; column: string }> };
  for (const { table, column } of rows.rows)
    await knex.raw('ALTER TABLE ?? ALTER COLUMN ?? SET STATISTICS -1', [table, column]);
}
