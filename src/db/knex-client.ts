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

/** Where knex's own warnings go (pino's shape): one JSON line each instead of knex's console output. */
export interface KnexLog {
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** The first line of what knex logs (its acquire errors carry a stack); its messages carry no connection string. */
const firstLine = (message: unknown) => String(message instanceof Error ? message.message : message).split('\n')[0]!.slice(0, 500);

/**
 * `applicationName` is what pg_stat_activity shows for the connections (the API's are 'treasury-api');
 * `log` receives knex's warnings and errors (a lost connection, a failed acquire) as structured lines.
 */
export function createKnex(connectionString: string, poolMax = 20, applicationName = 'treasury-api', log?: KnexLog): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString, application_name: applicationName },
    pool: { min: 0, max: poolMax },
    ...(log
      ? {
          log: {
            warn: (m: unknown) => log.warn({ detail: firstLine(m) }, 'database client warning'),
            error: (m: unknown) => log.error({ detail: firstLine(m) }, 'database client error'),
            deprecate: (m: unknown) => log.warn({ detail: firstLine(m) }, 'database client deprecation'),
            debug: () => undefined,
          },
        }
      : {}),
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
