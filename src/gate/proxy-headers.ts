/**
 * Which headers cross the gate, each way (docs/gate.md#headers):
 * - hop-by-hop headers (RFC 9110 §7.6.1: Connection and every header it names, Keep-Alive, Proxy-Connection,
 *   Proxy-Authenticate, Proxy-Authorization, TE, Trailer, Transfer-Encoding, Upgrade) stop at the gate both ways;
 * - payment headers never reach the origin: the buyer's X-PAYMENT / PAYMENT-SIGNATURE and anything named
 *   `payment-*` or `x-payment*` (the gate settled the payment; the origin gets the request only);
 * - the buyer's own X-Forwarded-* / Forwarded, and the client-address and scheme headers servers read as theirs
 *   (X-Real-IP, Client-IP, True-Client-IP, X-Forwarded-Scheme, X-Scheme…), are dropped and the gate's written
 *   instead (For, Host, Proto, and Prefix when routed by path prefix), so an origin can trust them as far as it
 *   trusts the gate; headers that name another request target or a part of it (X-Original-URL, X-Rewrite-URL,
 *   X-Forwarded-Uri, X-Script-Name — Flask's ReverseProxied strips it from the path…) are dropped, so what the
 *   origin serves is the path priced;
 * - Content-Type crosses under its own name only: `Content_Type` would be a second Content-Type to a server that
 *   maps headers to variables (Symfony reads HTTP_CONTENT_TYPE as one), not the one the gate read;
 * - from the origin, payment headers and `Settlement-Overrides` never reach the buyer as the origin wrote them
 *   (the receipt is the gate's; an upto charge is read from the override first).
 * - the buyer's Expect stops at the gate: the gate has read the whole body before it forwards anything, so the
 *   expectation was the gate's to meet (RFC 9110 §10.1.1), not the origin's.
 * Host: the origin's own host (virtual hosting works); X-Forwarded-Host and X-Forwarded-Proto name where the buyer
 * reached the gate — GATE_PUBLIC_URL's host and scheme when the gate has one, else the buyer's Host and the gate's
 * own listener's scheme (forwarded-address.ts).
 * Names are compared lower-cased with `_` read as `-` (`canonicalName`): servers that map headers to
 * variables (CGI, WSGI, Rack: `HTTP_X_PAYMENT`) read `X_PAYMENT` and `X-PAYMENT` alike, so `X_Payment`,
 * `Payment_Signature` or `X_Forwarded_For` are the dashed header to every rule here.
 *
 * Defends against: a payment credential leaking to the origin (which could replay it elsewhere within its
 * window), a forged receipt from the origin, request smuggling through hop-by-hop headers, spoofed forwarding
 * headers. Does not defend against: what the origin does with the headers it does get (cookies, Authorization).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** The origin's response headers as the gate's HTTP client gives them: names lower-cased, a repeated one an array. */
export type OriginResponseHeaders = Record<string, string | string[] | undefined>;

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

const FORWARDING = new Set([
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-forwarded-server',
  'x-forwarded-scheme',
  'x-forwarded-ssl',
  'x-forwarded-protocol',
  'x-url-scheme',
  'x-scheme',
  'front-end-https',
  'x-real-ip',
  'client-ip',
  'x-client-ip',
  'true-client-ip',
  'x-cluster-client-ip',
]);

/**
 * Headers some servers read as the request's real target instead of its request line (Symfony and IIS's
 * X-Original-URL / X-Rewrite-URL, Traefik's X-Forwarded-Uri, nginx's X-Original-URI, Envoy's original path):
 * from a buyer they would have the origin serve another route than the one priced, so they never cross.
 */
const TARGET_OVERRIDES = new Set([
  'x-original-url',
  'x-rewrite-url',
  'x-original-uri',
  'x-forwarded-uri',
  'x-forwarded-path',
  'x-envoy-original-path',
  'x-original-path',
  'x-script-name',
]);

/** A lower-cased name with `_` read as `-` (the names a buyer sends seldom hold one: no copy then). */
const dashed = (lower: string): string => (lower.includes('_') ? lower.replaceAll('_', '-') : lower);

/** A header name as every rule here compares it: lower-case, `_` read as `-`. */
export function canonicalName(name: string): string {
  return dashed(name.toLowerCase());
}

/** A canonical name (`canonicalName`) that is a payment header. */
const isPaymentName = (canonical: string): boolean =>
  canonical.startsWith('payment-') || canonical.startsWith('x-payment');

/** Canonical names that never reach the origin, whatever the request (the lists above, and what the gate sets). */
const NEVER_TO_ORIGIN: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP,
  ...FORWARDING,
  ...TARGET_OVERRIDES,
  'host',
  'content-length',
  'expect',
]);

/** Canonical names that never reach the buyer from the origin, whatever the answer. */
const NEVER_TO_BUYER: ReadonlySet<string> = new Set([...HOP_BY_HOP, 'settlement-overrides']);

/** What `connectionListed` gives for a request or response without a Connection header; only ever read. */
const NONE_LISTED: ReadonlySet<string> = new Set();

/**
 * What `connectionListed` gives for the two values nearly every message carries, spelled as Node's and undici's
 * clients and servers send them (each lists itself only); only ever read. Any other spelling is parsed.
 */
const KEEP_ALIVE_LISTED: ReadonlySet<string> = new Set(['keep-alive']);
const CLOSE_LISTED: ReadonlySet<string> = new Set(['close']);

/** A payment header, either way: PAYMENT-SIGNATURE, PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT, X_PAYMENT… */
export function isPaymentHeader(name: string): boolean {
  return isPaymentName(canonicalName(name));
}

/** The header names a Connection header lists (they are hop-by-hop too), as `canonicalName` gives them. */
export function connectionListed(value: string | string[] | undefined): ReadonlySet<string> {
  if (value === undefined) return NONE_LISTED;
  if (value === 'keep-alive') return KEEP_ALIVE_LISTED;
  if (value === 'close') return CLOSE_LISTED;
  const listed = new Set<string>();
  for (const v of Array.isArray(value) ? value : value ? [value] : [])
    for (const token of v.split(',')) {
      const name = canonicalName(token.trim());
      if (name) listed.add(name);
    }
  return listed;
}

/**
 * One request's crossing headers, worked out once: the method-override check and the proxy read the same object
 * (so what was checked is what is forwarded); held only as long as the request's own headers are.
 */
const crossing = new WeakMap<IncomingHttpHeaders, Readonly<IncomingHttpHeaders>>();

/**
 * The buyer's headers that reach the origin as sent (the gate's forwarding headers, Host and Content-Length are
 * added by `requestHeadersForOrigin` and origin-proxy.ts). What method-override.ts decides on.
 */
export function buyerHeadersForOrigin(incoming: IncomingHttpHeaders): Readonly<IncomingHttpHeaders> {
  const seen = crossing.get(incoming);
  if (seen) return seen;
  const listed = connectionListed(incoming.connection);
  const out: IncomingHttpHeaders = {};
  for (const name of Object.keys(incoming)) {
    const lower = name.toLowerCase();
    const canonical = dashed(lower);
    if (NEVER_TO_ORIGIN.has(canonical) || listed.has(canonical) || isPaymentName(canonical)) continue;
    if (canonical === 'content-type' && lower !== 'content-type') continue;
    if (lower.startsWith(':')) continue;
    out[lower] = incoming[name];
  }
  crossing.set(incoming, out);
  return out;
}

/**
 * The request headers the origin gets (Host is set by the proxy to the origin's; Content-Length by the proxy
 * to the length of the body the gate read, origin-proxy.ts).
 */
export function requestHeadersForOrigin(
  incoming: IncomingHttpHeaders,
  forwarded: { for: string | undefined; host: string | undefined; proto: 'http' | 'https'; prefix: string },
): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = { ...buyerHeadersForOrigin(incoming) };
  if (forwarded.for) out['x-forwarded-for'] = forwarded.for;
  if (forwarded.host) out['x-forwarded-host'] = forwarded.host;
  out['x-forwarded-proto'] = forwarded.proto;
  if (forwarded.prefix) out['x-forwarded-prefix'] = forwarded.prefix;
  return out;
}

/** The origin's response headers the buyer may get; `drop` names more to leave out (e.g. content-length). */
export function responseHeadersForBuyer(
  incoming: OriginResponseHeaders,
  drop: readonly string[] = [],
): OutgoingHttpHeaders {
  const listed = connectionListed(incoming.connection);
  const out: OutgoingHttpHeaders = {};
  for (const name of Object.keys(incoming)) {
    const value = incoming[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    const canonical = dashed(lower);
    if (NEVER_TO_BUYER.has(canonical) || listed.has(canonical) || isPaymentName(canonical)) continue;
    if (drop.length > 0 && drop.includes(lower)) continue;
    out[lower] = value;
  }
  return out;
}
