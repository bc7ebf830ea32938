/**
 * Which error codes an operation of the catalogue (./api-catalog.ts) can answer, grouped by HTTP status: the
 * codes every route of its kind answers (any route may fail inside; a route with a bearer can refuse it, be
 * rate limited or find PostgreSQL out of reach; a body can be malformed, too large or not JSON; a path
 * parameter malformed) plus the route's own (`errors`). Each status's reply in the document is the error
 * envelope (src/shared/api-responses/error-responses.ts) with `error_code` narrowed to these codes.
 *
 * Defends: a generated client meeting a status or code its operation does not list. Does not defend: a code
 * a route answers that nobody listed (the OpenAPI reply test catches those its flows produce).
 */
import { ERROR_CODES, type ErrorCode } from '../../../shared/error-codes.js';
import type { Auth, CatalogEntry } from './api-catalog.js';

/** Bearers checked by the platform authenticator, which refuses removed master keys by name. */
const PLATFORM_AUTH: ReadonlySet<Auth> = new Set([
  'session',
  'owner_session',
  'session_or_agent',
  'session_or_service',
  'service',
  'agent',
  'any',
]);

/** Every code the entry can answer, deduplicated, in ERROR_CODES order. */
export function errorCodesOf(entry: CatalogEntry): ErrorCode[] {
  const codes = new Set<ErrorCode>(['internal_error']);
  const add = (...more: ErrorCode[]) => more.forEach((c) => codes.add(c));
  if (entry.auth !== 'none') {
    add('unauthorized', 'invalid_token', 'insufficient_scope', 'rate_limited');
    add('database_unavailable', 'database_busy');
  }
  if (PLATFORM_AUTH.has(entry.auth)) add('master_key_removed');
  if (entry.auth === 'owner_session') add('fresh_sign_in_required');
  if (entry.method === 'POST' && entry.path.startsWith('/v1/identity/')) add('rate_limited', 'database_unavailable');
  if (entry.body) add('invalid_request', 'malformed_json', 'payload_too_large', 'unsupported_media_type');
  if (entry.query) add('invalid_request');
  if (entry.path.includes('{') && !entry.path.startsWith('/docs')) add('invalid_path_parameter');
  add(...(entry.errors ?? []));
  return (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => codes.has(c));
}

/** The entry's error codes by HTTP status. */
export function errorCodesByStatus(entry: CatalogEntry): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(entry)) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}
