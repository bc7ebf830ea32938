/**
 * OPTIONS is the gate's to answer, never the origin's: a request to a sold path gets 204 with `Allow` (the
 * methods sold there, HEAD beside GET, OPTIONS) and, for a CORS preflight (an `Origin` header), the
 * Access-Control-* headers a browser needs to send the paid request: any origin (no credentials), those methods,
 * the requested headers when they are plain header names (else the payment and content headers), and the
 * payment headers exposed. A path nothing is sold at is 404 `gate_endpoint_not_found`, as for any method.
 *
 * Defends against: OPTIONS (with a body, to any path) reaching the origin unpaid — nothing is forwarded. Does
 * not defend against: an origin's own CORS policy for OPTIONS (it is not asked); the paid answers carry the
 * origin's own CORS headers.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type { GateEndpointEntry } from './seller-table.js';

const DEFAULT_ALLOWED_HEADERS = 'content-type, payment-signature, x-payment';
const EXPOSED_HEADERS = 'payment-required, payment-response, x-payment-response';
/** An `Access-Control-Request-Headers` value echoed back: header names (RFC 9110 tokens) and commas only. */
const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;

/** The methods sold at a path, in a stable order. */
export function allowedMethods(entries: readonly GateEndpointEntry[]): string[] {
  const methods = new Set(entries.map((e) => e.endpoint.method.toUpperCase()));
  if (methods.has('GET')) methods.add('HEAD');
  return [...[...methods].sort(), 'OPTIONS'];
}

/** The 204 headers for an OPTIONS request to a path where `entries` are sold. */
export function preflightHeaders(
  entries: readonly GateEndpointEntry[],
  request: { origin: string | undefined; requestHeaders: string | undefined },
): OutgoingHttpHeaders {
  const allow = allowedMethods(entries).join(', ');
  const headers: OutgoingHttpHeaders = { allow, 'cache-control': 'no-store', 'content-length': '0' };
  if (request.origin === undefined) return headers;
  const asked = request.requestHeaders?.trim();
  return {
    ...headers,
    'access-control-allow-origin': '*',
    'access-control-allow-methods': allow,
    'access-control-allow-headers':
      asked && asked.length <= 1024 && HEADER_LIST.test(asked) ? asked : DEFAULT_ALLOWED_HEADERS,
    'access-control-expose-headers': EXPOSED_HEADERS,
    'access-control-max-age': '600',
    vary: 'Origin, Access-Control-Request-Headers',
  };
}
