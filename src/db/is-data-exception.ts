/**
 * Whether PostgreSQL refused a statement for a value in it (SQLSTATE class 22, data exception): a number
 * out of range for its column (22003), text it cannot hold — NUL, a lone surrogate (22P05, 22021, 22P02) —
 * and the like. Such an error belongs to the row that carries the value: the same row fails again alone,
 * and the rows written beside it are not at fault. The pay path's group commit (./reservation-writer.ts)
 * sends the others again without it; the caller of that row answers 400 `unstorable_value`.
 *
 * Defends: one request's value failing the writes that happened to share its statement.
 * Does not defend: a data exception raised by the statement itself rather than by a value (there is none in
 * the statements this is used for: their casts are of values the caller supplies).
 */
import pg from 'pg';

export function isDataException(err: unknown): boolean {
  return err instanceof pg.DatabaseError && typeof err.code === 'string' && err.code.startsWith('22');
}
