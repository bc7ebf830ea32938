/**
 * The hash an Idempotency-Key's later uses are compared with: SHA-256 of the request's route and body as
 * canonical JSON (base/canonical-json.ts), so the same body sent again with its keys in another order is the
 * same request. A body text seen before (an agent paying the same resource again) reuses its canonical JSON,
 * remembered by the exact text it was parsed from (../http/middleware/json-body.ts); the route, which names
 * the wallet, is joined to it each time. The result is the same string `canonicalJson({ route, body })`
 * makes — keys sorted, `body` before `route` (test/unit/pay/request-hash.test.ts) — so hashes stored before
 * and after compare equal.
 *
 * Defends: memory (at most MAX_REMEMBERED_BODIES texts of at most MAX_BODY_CHARS characters); a body canonical
 * JSON cannot spell — a number JSON.parse read as ±Infinity (`1e400` in an x402 entry's open fields) — answered
 * 400 `invalid_request` naming where it lies, before anything is reserved, instead of failing the route.
 * Does not defend: anything else about the request itself — it is hashed, not checked.
 */
import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { canonicalJson, CanonicalJsonError } from '../../../base/canonical-json.js';
import { toStorableText } from '../http/schemas/common-schemas.js';
import { AppError } from '../errors/app-error.js';

const MAX_REMEMBERED_BODIES = 1024;
const MAX_BODY_CHARS = 8192;

/** Canonical JSON of recent bodies, by the text each was parsed from (a pure function of it). */
const canonicalBodies = new LRUCache<string, string>({ max: MAX_REMEMBERED_BODIES });

/** SHA-256 (hex) of `request`'s canonical JSON; `bodyText` is the text its `body` was parsed from, when it has one. */
export function requestHash(request: unknown, bodyText?: string): string {
  let canonical: string;
  try {
    canonical = canonicalRequest(request, bodyText);
  } catch (err) {
    if (!(err instanceof CanonicalJsonError)) throw err;
    const full = err.details.path.join('.');
    const path = toStorableText(full.length > 200 ? `${full.slice(0, 200)}…` : full);
    const issue = { path, message: 'must be a number JSON can spell (finite)' };
    throw new AppError('invalid_request', {
      message: `The request body is invalid: ${path}: ${issue.message}`,
      fields: { issues: [issue] },
    });
  }
  return hash('sha256', canonical, 'hex');
}

function canonicalRequest(request: unknown, bodyText: string | undefined): string {
  if (bodyText === undefined || bodyText.length > MAX_BODY_CHARS || !isRouteAndBody(request))
    return canonicalJson(request);
  let body = canonicalBodies.get(bodyText);
  if (body === undefined) {
    body = canonicalJson(request.body);
    canonicalBodies.set(bodyText, body);
  }
  return `{"body":${body},"route":${JSON.stringify(request.route)}}`;
}

/** Exactly `{ route, body }`, a string route and a body that JSON keeps (not undefined). */
function isRouteAndBody(request: unknown): request is { route: string; body: unknown } {
  if (request === null || typeof request !== 'object') return false;
  const keys = Object.keys(request);
  const { route, body } = request as { route?: unknown; body?: unknown };
  return keys.length === 2 && typeof route === 'string' && body !== undefined && keys.includes('body');
}
