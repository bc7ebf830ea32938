/** A PostgreSQL error as node-postgres raises it, with the severity and SQLSTATE a test needs. */
import pg from 'pg';

export function databaseError(severity: string, code: string): pg.DatabaseError {
  const err = new pg.DatabaseError('from the server', 0, 'error');
  err.severity = severity;
  err.code = code;
  return err;
}
