/**
 * The gate's public address (docs/gate.md#the-gates-public-address): what a gate sends to `POST /v1/gate/address`
 * and what the API answers there and at `GET /v1/gate/address` and `POST /v1/gate/address/verify`. Defined once
 * here: the API validates with it, the gate parses the reply with it and checks its own GATE_PUBLIC_URL with
 * `gateBaseUrlSchema`.
 *
 * A gate base URL is an http(s) URL of at most 2048 characters naming a scheme, a host and optionally a port —
 * no credentials, no path beyond `/`, no query or fragment, no control or white-space characters — because the
 * catalogue lists `<url>/<slug><route>` and the gate routes by the first path segment.
 *
 * A gate base domain (its GATE_BASE_DOMAIN: `<slug>.<domain>` names a seller by host) is a DNS host name of at most
 * MAX_BASE_DOMAIN_LENGTH characters (so that every seller's name under it, a slug of up to 63 characters and a dot
 * before it, and the random name it is proven at, stay within DNS's 253): two labels or more, each 1 to 63 lower-case letters, digits and inner dashes, the last one
 * starting with a letter (so no IPv4 literal in any notation the URL parser reads), no trailing dot, and the
 * URL parser must read it back as the very same host name (no IDNA rewriting).
 *
 * Defends: an address that would be read two ways (a path prefix the gate does not route, credentials shown in
 * the public catalogue, a query), or a base domain that is no plain host name (an IP literal, a port, a path, upper
 * case, an empty label), reaching the store. Does not defend: whether the address or the domain is the gate's —
 * that is what the verification proves (src/api/sellers/gate-address/).
 */
import { z } from 'zod';
import { timestampField } from './api-responses/response-fields.js';

export const GATE_VERIFICATION_PATH = '/.well-known/xx-gate-verification.txt';

/**
 * True when `value` is a bare http(s) origin (an optional trailing `/` aside): as written — nothing after the
 * authority but one `/`, and no `?`, `#`, `@` or backslash anywhere — and as parsed.
 */
function isBareOrigin(value: string): boolean {
  const scheme = /^https?:\/\//i.exec(value);
  if (!scheme || /[?#@\\]/.test(value)) return false;
  const rest = value.slice(scheme[0].length);
  const slash = rest.indexOf('/');
  if (slash !== -1 && slash !== rest.length - 1) return false;
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.pathname === '/' && u.hostname !== '';
  } catch {
    return false;
  }
}

export const gateBaseUrlSchema = z
  .string()
  .min(1)
  .max(2048, { abort: true })
  // White space, controls, and characters that hide or reorder text (which the URL parser may drop silently).
  .refine(
    (v) => !/[\s\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/u.test(v),
    'no white space, control or invisible characters',
  )
  .refine(isBareOrigin, 'an http(s) origin: scheme, host and optional port, no credentials, path, query or fragment');

/** One DNS label (RFC 1123): 1 to 63 lower-case letters, digits and dashes, no dash first or last. */
export const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Labels as DNS_LABEL, two or more, the last starting with a letter (never an IPv4 literal); length checked apart. */
const BASE_DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** True when the URL parser reads `name` as exactly that host name (no IDNA mapping, no IP literal). */
function parsesAsItself(name: string): boolean {
  try {
    return new URL(`http://${name}/`).hostname === name;
  } catch {
    return false;
  }
}

/** DNS's 253 characters for a name, less a 63-character slug and its dot. */
export const MAX_BASE_DOMAIN_LENGTH = 253 - 64;

/** The gate's base domain (GATE_BASE_DOMAIN): see the header. */
export const gateBaseDomainSchema = z
  .string()
  .min(3)
  .max(MAX_BASE_DOMAIN_LENGTH, { abort: true })
  .regex(BASE_DOMAIN, 'a lower-case DNS host name of two labels or more, no IP literal, no trailing dot')
  .refine(parsesAsItself, 'a host name the URL parser reads as itself');

/** The CAIP-2 EVM network a gate sells on (its GATE_NETWORK). */
export const gateNetworkSchema = z.string().regex(/^eip155:[1-9][0-9]{0,15}$/, 'a CAIP-2 eip155 network');

export const gateAddressBodySchema = z
  .object({
    url: gateBaseUrlSchema,
    network: gateNetworkSchema,
    /** The gate's GATE_BASE_DOMAIN, when it routes `<slug>.<domain>` by host; absent: none. */
    base_domain: gateBaseDomainSchema.optional(),
  })
  .strict();
export type GateAddressBody = z.infer<typeof gateAddressBodySchema>;

export const gateAddressViewSchema = z.object({
  account_id: z.string().max(40),
  /** The gate's base URL, as stored (no trailing `/`). */
  url: z.string().max(2048),
  /** The network the gate sells on: the catalogue lists its sellers only when it is the catalogue's. */
  network: gateNetworkSchema,
  /** Where the gate serves the token, and the token (the account's, kept across address changes). */
  path: z.literal(GATE_VERIFICATION_PATH),
  token: z.string().regex(/^xx-gate-[0-9a-f]{32}$/),
  /** When the platform last fetched the token from this very URL; null until then and after a change. */
  verified_at: timestampField.nullable(),
  /** The gate's base domain as last named; null when the gate named none. */
  base_domain: z.string().max(MAX_BASE_DOMAIN_LENGTH).nullable(),
  /**
   * When the platform last fetched the token from `<random label>.<base_domain>` (the URL's scheme and port); null
   * until then and after the URL or the domain changes. Independent of `verified_at` once the URL is verified.
   */
  base_domain_verified_at: timestampField.nullable(),
  /**
   * `POST /v1/gate/address/verify` only: why the base domain was not proven this time (an error code of the
   * verification, e.g. `gate_verification_not_found`), the URL's proof standing; absent otherwise.
   */
  base_domain_error: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,63}$/)
    .optional(),
});
export type GateAddressView = z.infer<typeof gateAddressViewSchema>;

/**
 * The origin a seller is reached at by host on a gate with a base domain: `<slug>.<baseDomain>` with the scheme and
 * port of the gate's URL (`URL.origin` form, a default port elided); undefined when the slug is no DNS label or
 * the result is not exactly that host (pure).
 */
export function hostRoutedOrigin(gateUrl: string, baseDomain: string, slug: string): string | undefined {
  if (!DNS_LABEL.test(slug)) return undefined;
  const name = `${slug}.${baseDomain}`;
  try {
    const gate = new URL(gateUrl);
    if (gate.protocol !== 'http:' && gate.protocol !== 'https:') return undefined;
    const url = new URL(`${gate.protocol}//${name}${gate.port ? `:${gate.port}` : ''}/`);
    return url.hostname === name ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The canonical form stored: the origin, without a trailing `/` (host lower-cased, default port dropped). */
export function canonicalGateUrl(value: string): string {
  return new URL(value).origin;
}
