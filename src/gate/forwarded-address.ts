/**
 * Where the origin is told the buyer reached the gate: the scheme and host of X-Forwarded-Proto and
 * X-Forwarded-Host (proxy-headers.ts writes them; the buyer's own forwarding headers never cross).
 *
 * With GATE_PUBLIC_URL (the gate's public address, canonical: scheme, host, optional port), the operator's word
 * decides: the scheme is its scheme (a TLS front's https, though the gate itself listens in plain http), the host is
 * its host and port — or, for a request routed by host, the host name the router matched to
 * `<slug>.<GATE_BASE_DOMAIN>` (gate-router.ts) with the public URL's port. Without it, as the gate's own listener
 * was reached: http (or https on a TLS socket) and the buyer's Host.
 *
 * Defends against: an origin behind a TLS front told `http` (links, redirects and cookies' Secure flag written for
 * plain http), and a buyer choosing, by a header of its own (Host, X-Forwarded-Proto, Forwarded…), the scheme or
 * host an origin builds its absolute URLs from, once the gate has a public address. Does not defend against: a
 * GATE_PUBLIC_URL that is not where buyers reach the gate (the operator's configuration), nor, without one, a
 * buyer's Host header (there is no other word on the gate's name).
 */
import { hostName } from './gate-router.js';

/** The scheme and host to forward, as GATE_PUBLIC_URL names them (read once, at start). */
export interface PublicAddress {
  proto: 'http' | 'https';
  /** `host[:port]`, the port only when it is not the scheme's default. */
  host: string;
  /** The port when it is not the scheme's default, else ''. */
  port: string;
}

/** GATE_PUBLIC_URL read once; undefined: the gate has no public address. */
export function publicAddressOf(publicUrl: string | undefined): PublicAddress | undefined {
  if (publicUrl === undefined) return undefined;
  const url = new URL(publicUrl);
  return Object.freeze({ proto: url.protocol === 'https:' ? 'https' : 'http', host: url.host, port: url.port });
}

/** What one request forwards: the scheme, and the host (undefined: none to name). */
export interface ForwardedAddress {
  proto: 'http' | 'https';
  host: string | undefined;
}

/**
 * The scheme and host forwarded for one request (see the header). `routedBy`: how the router named the seller;
 * `hostHeader`: the buyer's Host; `encrypted`: the gate's own socket is TLS.
 */
export function forwardedAddress(
  address: PublicAddress | undefined,
  routedBy: 'host' | 'prefix',
  hostHeader: string | undefined,
  encrypted: boolean,
): ForwardedAddress {
  if (address === undefined) return { proto: encrypted ? 'https' : 'http', host: hostHeader };
  if (routedBy === 'prefix') return { proto: address.proto, host: address.host };
  // Routed by host: the router matched this name to `<slug>.<GATE_BASE_DOMAIN>`; the Host's port is the buyer's.
  const name = hostName(hostHeader);
  const host = name === undefined ? address.host : address.port ? `${name}:${address.port}` : name;
  return { proto: address.proto, host };
}
