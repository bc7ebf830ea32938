/**
 * Whether PostgreSQL refused a statement because of what one of its rows holds — an error that belongs to
 * that row: the same row fails again when sent alone, and the rows written beside it are not at fault.
 * - A data exception (SQLSTATE class 22, `isDataException`): a number out of range for its column (22003),
 *   text PostgreSQL cannot hold — NUL, a lone surrogate (22P05, 22021, 22P02) — and the like. The request
 *   that carried it answers 400 `unstorable_value`: sent again, it would only fail again.
 * - An integrity constraint violation (class 23): a nonce or Idempotency-Key already used, an audit row at a
 *   sequence another process took, a buyer PAT's day over its cap. The request is decided again alone.
 * The pay path's group commit (./reservation-writer.ts) sends the other rows of such a statement again
 * without the refused one.
 *
 * Defends: one request's row failing the writes that happened to share its statement.
 * Does not defend: such an error raised by the statement itself rather than by a row (the statements this is
 * used for cast and check only what their rows carry).
 */
import pg from 'pg';

const sqlstate = (err: unknown): string =>
  err instanceof pg.DatabaseError && typeof err.code === 'string' ? err.code : '';

/** SQLSTATE class 22: PostgreSQL cannot hold a value the row carries. */
export function isDataException(err: unknown): boolean {
  return sqlstate(err).startsWith('22');
}

/** SQLSTATE class 22 or 23: the row's values, or the row against the rows already stored. */
export function isRowError(err: unknown): boolean {
  const code = sqlstate(err);
  return code.startsWith('22') || code.startsWith('23');
}
