/**
 * Whether an error means PostgreSQL cancelled a statement for running out of time under the API's session
 * limits (./knex-client.ts SessionLimits): a lock waited for longer than `lock_timeout` (55P03), or a
 * statement ran longer than `statement_timeout` (57014, also what an administrator's pg_cancel_backend
 * gives). A request that met one answers 503 `database_busy` with Retry-After: its transaction rolled
 * back, nothing of it was written, and the same request may succeed once the lock is free.
 *
 * Defends: a request held for as long as someone else holds a wallet's lock or a table (a long manual
 * transaction, a migration), answered 500 or never — the client is told to retry instead.
 * Does not defend: a slow database in general; it turns waiting into a prompt refusal.
 */
import pg from 'pg';
import { someDatabaseCause } from './is-database-unavailable.js';

const BUSY_CODES = new Set(['55P03', '57014']);

export function isDatabaseBusy(err: unknown): boolean {
  return someDatabaseCause(err, (e) => e instanceof pg.DatabaseError && BUSY_CODES.has(e.code ?? ''));
}
