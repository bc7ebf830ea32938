/**
 * knex + pg connection and migration helpers. Migrations live in ./migrations and run as their own step
 * (`npm run migrate`); the API refuses to start while one is pending.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

// bigint columns (int8) come back as strings by default; money code wants exact integers as strings.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => v);

export type { Knex };

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

export function createKnex(connectionString: string, poolMax = 20): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString, application_name: 'treasury-api' },
    pool: { min: 0, max: poolMax },
    migrations: { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'], tableName: 'knex_migrations' },
  });
}

export async function listPendingMigrations(knex: Knex): Promise<string[]> {
  const [, pending] = (await knex.migrate.list()) as [unknown[], Array<{ file: string } | string>];
  return pending.map((p) => (typeof p === 'string' ? p : p.file));
}

export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest()) as [number, string[]];
  return applied;
}
