/**
 * Whether an error means PostgreSQL was not there to answer — refused or dropped the connection (a restart,
 * a failover, an administrator's pg_terminate_backend, a network fault, the pool waiting too long for a
 * connection) — rather than refused a statement. A request that met one answers 503 `database_unavailable`
 * with Retry-After instead of 500 `internal_error`: nothing about the request was wrong, and the same
 * request may succeed a moment later (the pool and the pay path's writers open new connections).
 *
 * Defends: a client told "our side is broken, do not retry" when the right answer is "retry shortly".
 * Does not decide whether anything was written: a statement whose connection dropped after COMMIT did
 * commit. Callers that must know read it back (../pay/store/signature-recorder.ts) or keep it counted (the pay path's
 * reservations).
 */
import pg from 'pg';

/** Node's socket errors that mean the server could not be reached or went away. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * node-postgres's own errors for a connection that ended under a query, or a client that lost its connection
 * (knex prefixes the SQL: "select … - Connection terminated unexpectedly").
 */
const CLIENT_MESSAGES = [
  /(?:^| - )Connection terminated/,
  /(?:^| - )Client has encountered a connection error and is not queryable/,
  /(?:^| - )Client was closed and is not queryable/,
  /^statement connection closed$/,
];

/**
 * Whether `test` holds for `err` or for an error it wraps — its `cause`, or one of an AggregateError's
 * `errors` (connecting to both address families) — a few levels deep. A PostgreSQL error ends the walk:
 * it is the answer, whatever `test` says.
 */
export function someDatabaseCause(err: unknown, test: (err: object) => boolean, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 3) return false;
  if (test(err)) return true;
  if (err instanceof pg.DatabaseError) return false;
  const e = err as { cause?: unknown; errors?: unknown };
  if (Array.isArray(e.errors) && e.errors.some((inner) => someDatabaseCause(inner, test, depth + 1))) return true;
  return someDatabaseCause(e.cause, test, depth + 1);
}

function unavailable(err: object): boolean {
  if (err instanceof pg.DatabaseError) {
    // FATAL / PANIC end the session; class 08 is "connection exception", 57P0x the server shutting down or starting.
    return (
      err.severity === 'FATAL' ||
      err.severity === 'PANIC' ||
      (err.code ?? '').startsWith('08') ||
      /^57P0\d$/.test(err.code ?? '')
    );
  }
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true;
  if (e.name === 'KnexTimeoutError') return true;
  return typeof e.message === 'string' && CLIENT_MESSAGES.some((m) => m.test(e.message as string));
}

export function isDatabaseUnavailable(err: unknown): boolean {
  return someDatabaseCause(err, unavailable);
}
