/**
 * Whether a PostgreSQL connection that raised `err` may run another statement: after a statement error
 * PostgreSQL answered (severity ERROR: a constraint, a bad value) or one of the service's own errors thrown
 * between statements (AppError), yes; after a network error (ECONNRESET, EPIPE…), a FATAL or PANIC (e.g. the
 * backend terminated by an administrator) or anything unknown, no — the caller drops the connection. Used
 * for the knex pool's raw connections (./wallet-transaction.ts) and the writers' own (./statement-connection.ts).
 */
import pg from 'pg';
import { AppError } from '../errors/app-error.js';

export function connectionUsableAfter(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) return err.severity === 'ERROR';
  return err instanceof AppError;
}
