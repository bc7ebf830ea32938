/**
 * The client address a request is counted under by the rate limits (src/api/http/middleware/rate-limit.ts).
 * It is the TCP peer's address, unless that peer is one of the configured trusted proxies (TREASURY_TRUSTED_PROXIES): then
 * X-Forwarded-For is read from the right, skipping trusted proxies, and the first address that is not one
 * is the client. IPv4-mapped IPv6 addresses count as IPv4; an IPv6 client is counted per /64 (one
 * subscriber's usual allocation), an IPv4 client per address. Addresses and ranges are parsed and matched
 * by ipaddr.js, never by hand.
 *
 * Defends: a client cannot choose its own address by sending X-Forwarded-For (believed only from a trusted
 * peer, and only up to the first hop that is not one); nor escape an IPv6 limit by walking its /64.
 * Does not defend: clients behind one NAT share a count; an attacker holding many /64s or IPv4 addresses
 * has that many counts (per-token limits and the work each request costs are the rest of the answer).
 */
import ipaddr from 'ipaddr.js';
import { ConfigError } from '../../../base/config-error.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
export type TrustedProxy = readonly [Address, number];

/** A single address as a proxy or socket writes it: dotted-quad IPv4 or IPv6 (IPv4-mapped becomes IPv4). */
function parseAddress(text: string): Address | undefined {
  const s = text.trim();
  if (ipaddr.IPv4.isValidFourPartDecimal(s)) return ipaddr.IPv4.parse(s);
  if (ipaddr.IPv6.isValid(s)) return ipaddr.process(s);
  return undefined;
}

/** TREASURY_TRUSTED_PROXIES: comma-separated addresses or CIDR ranges; throws on anything else. */
export function parseTrustedProxies(list: string): TrustedProxy[] {
  const out: TrustedProxy[] = [];
  for (const raw of list.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    if (entry.includes('/')) {
      if (!ipaddr.isValidCIDR(entry))
        throw new ConfigError('api', `TREASURY_TRUSTED_PROXIES: "${entry}" is not a CIDR range`);
      const [address, bits] = ipaddr.parseCIDR(entry);
      // An IPv4-mapped range (::ffff:10.0.0.0/104) is the IPv4 range, as peers are compared after the same mapping.
      if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96)
        out.push([(address as ipaddr.IPv6).toIPv4Address(), bits - 96]);
      else out.push([address, bits]);
      continue;
    }
    const address = parseAddress(entry);
    if (!address) throw new ConfigError('api', `TREASURY_TRUSTED_PROXIES: "${entry}" is not an address`);
    out.push([address, address.kind() === 'ipv4' ? 32 : 128]);
  }
  return out;
}

function isTrusted(address: Address, trusted: readonly TrustedProxy[]): boolean {
  // ipaddr's subnetMatch compares only ranges of the address's own kind.
  return (
    trusted.length > 0 &&
    ipaddr.subnetMatch(address, { trusted: trusted as [Address, number][] }, 'other') === 'trusted'
  );
}

/** The counting key of an address: IPv4 as is, IPv6 as its /64 (`2001:db8:1:2::/64`). */
export function addressKey(address: Address): string {
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts;
  return `${new ipaddr.IPv6([parts[0]!, parts[1]!, parts[2]!, parts[3]!, 0, 0, 0, 0]).toString()}/64`;
}

/**
 * The client's counting key from the TCP peer address and the X-Forwarded-For header (as Node joins
 * repeated headers: comma-separated). `unknown` when the peer address is absent (a closed socket).
 */
export function clientAddressKey(
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: readonly TrustedProxy[],
): string {
  let current = peer === undefined ? undefined : parseAddress(peer);
  if (!current) return 'unknown';
  if (trusted.length > 0 && forwardedFor) {
    const hops = forwardedFor.split(',');
    for (let i = hops.length - 1; i >= 0 && isTrusted(current, trusted); i--) {
      const hop = parseAddress(hops[i]!);
      if (!hop) break; // a malformed hop: the last trusted proxy's peer is as far as we can believe
      current = hop;
    }
  }
  return addressKey(current);
}
