/**
 * The answer to an OPTIONS request for a priced route, shared by the Koa middleware (./paid-request.ts, rule 1)
 * and the gate (src/gate/cors-preflight.ts): 204 with `Allow` (the methods sold there, HEAD beside GET, OPTIONS)
 * and, for a CORS preflight (an `Origin` header), the Access-Control-* headers a browser needs to send the paid
 * request: any origin (no credentials), those methods, the requested headers when they are plain header names
 * (else the payment and content headers), and the payment headers exposed. Pure: no request or response object.
 *
 * Defends against: a preflight (which cannot carry a payment) running the paid work — the paywall answers it
 * itself; an `Access-Control-Request-Headers` value that is not a list of header names echoed back (it is
 * replaced by the default list). Does not defend against: the seller's own CORS policy (it is not asked; the paid
 * answers carry the handler's or origin's own CORS headers).
 */

const DEFAULT_ALLOWED_HEADERS = 'content-type, payment-signature, x-payment';
const EXPOSED_HEADERS = 'payment-required, payment-response, x-payment-response';
/** An `Access-Control-Request-Headers` value echoed back: header names (RFC 9110 tokens) and commas only. */
const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;

/** What a preflight answer reads of its request. */
export interface PreflightRequest {
  origin: string | undefined;
  requestHeaders: string | undefined;
}

/** `methods` upper-cased, HEAD beside GET, in a stable order, then OPTIONS. */
export function allowedMethods(methods: Iterable<string>): string[] {
  const set = new Set([...methods].map((m) => m.toUpperCase()));
  set.delete('OPTIONS');
  if (set.has('GET')) set.add('HEAD');
  return [...[...set].sort(), 'OPTIONS'];
}

/** The 204 headers for an OPTIONS request to a path where `methods` are sold. */
export function preflightHeaders(methods: Iterable<string>, request: PreflightRequest): Record<string, string> {
  const allow = allowedMethods(methods).join(', ');
  const headers: Record<string, string> = { allow, 'cache-control': 'no-store', 'content-length': '0' };
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
