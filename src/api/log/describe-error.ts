/**
 * An error as it may be logged: what helps to find the fault, nothing that can carry a secret.
 *
 * - A PostgreSQL error is described by its SQLSTATE, severity, constraint, table, column, data type and
 *   routine only. Its message is left out: PostgreSQL names the offending value in some of them
 *   (`invalid input syntax for type integer: "<value>"`), its `detail` and `where` quote row values, and a
 *   message knex prefixed holds the statement — with bind values inlined where knex formats it (see
 *   ../db/knex-client.ts, `compileSqlOnError: false`). Its stack, which repeats the message, is left out too.
 * - Any other error keeps its name, message and stack, with every URL in them cut to scheme, host and port
 *   (./redact-url.ts): viem's errors quote the RPC endpoint with its key. Fields an error carries besides
 *   (knex's `bindings` and `sql`, viem's `url`, a request body) are never copied.
 * - Causes are described the same way, three levels deep.
 *
 * Does not defend: a secret an error message holds outside a URL (code in src/ puts none there).
 */
import { redactUrlsIn } from '../../shared/redact-url.js';

export interface ErrorDescription {
  type: string;
  message?: string;
  stack?: string;
  /** PostgreSQL errors. */
  sqlstate?: string;
  severity?: string;
  constraint?: string;
  table?: string;
  column?: string;
  data_type?: string;
  routine?: string;
  /** AppError's stable code, when the error is one. */
  code?: string;
  cause?: ErrorDescription | string;
}

const MAX_DEPTH = 3;

/** True for an error node-postgres raised from a server response (a SQLSTATE and a severity). */
function isDatabaseError(err: object): err is Record<string, unknown> & { code: string } {
  const e = err as Record<string, unknown>;
  return typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string';
}

export function describeError(err: unknown, depth = 0): ErrorDescription | string {
  if (!(err instanceof Error)) {
    if (err !== null && typeof err === 'object' && isDatabaseError(err)) return databaseFields(err);
    if (typeof err === 'string') return redactUrlsIn(err).slice(0, 1_000);
    return err === undefined ? 'undefined' : `non-error thrown (${typeof err})`;
  }
  if (isDatabaseError(err)) return databaseFields(err);
  const code = (err as { code?: unknown }).code;
  const out: ErrorDescription = {
    type: err.name,
    message: redactUrlsIn(err.message),
    ...(typeof code === 'string' && /^[a-z0-9_]{1,64}$/i.test(code) ? { code } : {}),
    ...(err.stack ? { stack: redactUrlsIn(err.stack) } : {}),
  };
  const cause = (err as { cause?: unknown }).cause;
  if (cause !== undefined)
    out.cause = depth < MAX_DEPTH ? describeError(cause, depth + 1) : 'cause not shown (too deep)';
  return out;
}

function databaseFields(err: Record<string, unknown> & { code: string }): ErrorDescription {
  const out: ErrorDescription = { type: 'database_error', sqlstate: err.code };
  for (const [from, to] of [
    ['severity', 'severity'],
    ['constraint', 'constraint'],
    ['table', 'table'],
    ['column', 'column'],
    ['dataType', 'data_type'],
    ['routine', 'routine'],
  ] as const) {
    const value = err[from];
    if (typeof value === 'string' && value !== '') out[to] = value.slice(0, 128);
  }
  return out;
}
