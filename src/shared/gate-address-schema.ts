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
 * Defends: an address that would be read two ways (a path prefix the gate does not route, credentials shown in
 * the public catalogue, a query) reaching the store. Does not defend: whether the address is the gate's — that is
 * what the verification proves (src/api/sellers/gate-address/).
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

/** The CAIP-2 EVM network a gate sells on (its GATE_NETWORK). */
export const gateNetworkSchema = z.string().regex(/^eip155:[1-9][0-9]{0,15}$/, 'a CAIP-2 eip155 network');

export const gateAddressBodySchema = z.object({ url: gateBaseUrlSchema, network: gateNetworkSchema }).strict();
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
});
export type GateAddressView = z.infer<typeof gateAddressViewSchema>;

/** The canonical form stored: the origin, without a trailing `/` (host lower-cased, default port dropped). */
export function canonicalGateUrl(value: string): string {
  return new URL(value).origin;
}
