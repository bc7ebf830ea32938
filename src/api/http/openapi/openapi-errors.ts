/**
 * Which error codes an operation of the catalogue (src/api/api-catalog.ts) can answer, grouped by HTTP status: the
 * codes every route of its kind answers (any route may fail inside; a route with a bearer can refuse it, be
 * rate limited or find PostgreSQL out of reach; a body can be malformed, too large or not JSON; a path
 * parameter malformed; the wallet or seller a route is on can be unknown or gone) plus the route's own
 * (`errors`, with the lists several routes share in ./catalog-error-lists.ts). Each status's reply in the
 * document is the error envelope (src/shared/api-responses/error-responses.ts) with `error_code` narrowed to
 * these codes.
 *
 * Defends: a generated client meeting a status or code its operation does not list. Does not defend: a code
 * a route answers that nobody listed (the OpenAPI reply test catches those its flows produce).
 */
import { ERROR_CODES, type ErrorCode } from '../../../shared/error-codes.js';
import type { Auth, CatalogEntry } from './catalog-entry.js';

/** Bearers checked by the platform authenticator, which refuses removed master keys by name. */
const PLATFORM_AUTH: ReadonlySet<Auth> = new Set([
  'session',
  'owner_session',
  'owner_session_or_service',
  'session_or_agent',
  'service',
  'agent',
  'any',
]);

/** The object a path (and everything below it) names, and what the route answers when it is unknown or gone. */
const PATH_OBJECTS: readonly (readonly [prefix: string, codes: readonly ErrorCode[]])[] = [
  ['/v1/treasuries/{id}', ['account_not_found']],
  ['/v1/wallets/{id}', ['wallet_not_found', 'wallet_revoked']],
  ['/v1/wallets/{id}/authorizations/{authorization_id}', ['authorization_not_found']],
  ['/v1/agents/{id}', ['agent_not_found']],
  ['/v1/pats/{id}', ['pat_not_found']],
  ['/v1/sellers/{id}', ['seller_not_found']],
  ['/v1/sellers/{id}/pats/{pat_id}', ['pat_not_found']],
  ['/v1/sellers/{id}/endpoints/{endpoint_id}', ['endpoint_not_found']],
  // The seller's ledger: the seller of a service PAT, or the one a session names.
  ['/v1/ledger', ['seller_not_found']],
];

/** Codes of the objects the entry's path names; a service PAT's seller may be gone whatever the path. */
function pathObjectCodes(entry: CatalogEntry): ErrorCode[] {
  const codes = PATH_OBJECTS.filter(([prefix]) => entry.path.startsWith(prefix)).flatMap(([, c]) => c);
  return entry.auth === 'service' ? [...codes, 'seller_not_found'] : codes;
}

/** Every code the entry can answer, deduplicated, in ERROR_CODES order. */
export function errorCodesOf(entry: CatalogEntry): ErrorCode[] {
  const codes = new Set<ErrorCode>(['internal_error']);
  const add = (...more: ErrorCode[]) => more.forEach((c) => codes.add(c));
  if (entry.auth !== 'none') {
    add('unauthorized', 'invalid_token', 'insufficient_scope', 'rate_limited');
    add('database_unavailable', 'database_busy');
  }
  if (PLATFORM_AUTH.has(entry.auth)) add('master_key_removed');
  if (entry.auth === 'owner_session' || entry.auth === 'owner_session_or_service') add('fresh_sign_in_required');
  if (entry.method === 'POST' && entry.path.startsWith('/v1/identity/')) add('rate_limited', 'database_unavailable');
  if (entry.body)
    add('invalid_request', 'malformed_json', 'body_too_complex', 'payload_too_large', 'unsupported_media_type');
  if (entry.query) add('invalid_request');
  if (entry.path.includes('{') && !entry.path.startsWith('/docs')) add('invalid_path_parameter');
  add(...pathObjectCodes(entry));
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
