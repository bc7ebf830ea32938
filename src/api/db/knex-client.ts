/**
 * knex + pg connection and migration helpers. Migrations live in ./migrations and run as their own step
 * (`npm run migrate`); the API refuses to start while one is pending.
 */
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { describeError } from '../log/describe-error.js';
import { redactUrlsIn } from '../../shared/redact-url.js';
import type { SessionLimits } from '../config/app-config.js';

// bigint columns (int8) come back as strings by default; money code wants exact integers as strings.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => v);

export type { Knex };

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../migrations');

/**
 * The migrations in MIGRATIONS_DIR, in the language this module runs in: `.ts` from the sources (tsx), `.js`
 * from the compiled build (`npm run build`, dist/migrations next to dist/src). Each is named by its `.ts` file
 * name whichever file is loaded, so knex_migrations holds the same names whether the sources or the build ran
 * them, and a database migrated by one is up to date for the other.
 */
const RUNNING_EXTENSION = path.extname(fileURLToPath(import.meta.url)) === '.js' ? '.js' : '.ts';

export const migrationSource: Knex.MigrationSource<string> = {
  async getMigrations() {
    const files = await fs.promises.readdir(MIGRATIONS_DIR);
    return files.filter((f) => f.endsWith(RUNNING_EXTENSION) && !f.endsWith('.d.ts')).sort();
  },
  getMigrationName: (file) => file.slice(0, -RUNNING_EXTENSION.length) + '.ts',
  getMigration: (file) => import(pathToFileURL(path.join(MIGRATIONS_DIR, file)).href) as Promise<Knex.Migration>,
};

/** Where knex's own warnings go (pino's shape): one JSON line each instead of knex's console output. */
export interface KnexLog {
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * What knex logs, made safe: an error through `describeError` (a database error by SQLSTATE, never its
 * message), text by its first line (its acquire errors carry a stack) with any URL cut to scheme and host.
 */
const detailOf = (message: unknown) =>
  message instanceof Error ? describeError(message) : redactUrlsIn(String(message).split('\n')[0]!.slice(0, 500));

/** How long an idle pooled connection stays open unless told otherwise (ms; the pool library's own default). */
const DEFAULT_POOL_IDLE_MS = 30_000;
/** Idle time after which a connection's TCP keepalives start (ms). */
const KEEPALIVE_AFTER_MS = 60_000;

/**
 * `applicationName` is what pg_stat_activity shows for the connections (the API's are 'treasury-api');
 * `log` receives knex's warnings and errors (a lost connection, a failed acquire) as structured lines;
 * `limits` are the API's session limits (migrations and other tools run without); `poolIdleMs` how long an idle
 * connection stays open (the API's: TREASURY_DB_POOL_IDLE_MS). The pool keeps no connection it does not use.
 */
export function createKnex(
  connectionString: string,
  poolMax = 20,
  applicationName = 'treasury-api',
  log?: KnexLog,
  limits?: SessionLimits,
  poolIdleMs = DEFAULT_POOL_IDLE_MS,
): Knex {
  return knexFactory({
    client: 'pg',
    connection: {
      connectionString,
      application_name: applicationName,
      // An idle connection kept open (a pooled one, for poolIdleMs; a group-commit writer's, always) still sends
      // TCP keepalives after a minute, so that a firewall or load balancer between the API and PostgreSQL that
      // drops idle flows after a few minutes does not drop it silently.
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_AFTER_MS,
      ...(limits
        ? {
            statement_timeout: limits.statementTimeoutMs,
            lock_timeout: limits.lockTimeoutMs,
            idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
          }
        : {}),
    },
    pool: { min: 0, max: poolMax, idleTimeoutMillis: poolIdleMs },
    // A failed query's message names its statement with placeholders, never with the bind values inlined
    // (knex's default formats them into it, and error messages end up in logs).
    compileSqlOnError: false,
    ...(log
      ? {
          log: {
            warn: (m: unknown) => log.warn({ detail: detailOf(m) }, 'database client warning'),
            error: (m: unknown) => log.error({ detail: detailOf(m) }, 'database client error'),
            deprecate: (m: unknown) => log.warn({ detail: detailOf(m) }, 'database client deprecation'),
            debug: () => undefined,
          },
        }
      : {}),
    migrations: { migrationSource, tableName: 'knex_migrations' },
  });
}

export async function listPendingMigrations(knex: Knex): Promise<string[]> {
  const [, pending] = (await knex.migrate.list()) as [unknown[], Array<{ file: string } | string>];
  return pending.map((p) => migrationSource.getMigrationName(typeof p === 'string' ? p : p.file));
}

export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest()) as [number, string[]];
  return applied;
}
