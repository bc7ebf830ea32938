/**
 * Whether an IP address is globally reachable, for the seller URLs the `xx mcp` `pay` tool is asked to fetch
 * (./seller-fetch.ts). The same rule as the API's for tenant-supplied URLs (src/api/net/address-class.ts,
 * which the CLI may not import): an address is public only when ipaddr.js puts it in no special-purpose range
 * ('unicast') — loopback, RFC 1918, carrier-grade NAT, link-local (cloud metadata at 169.254.169.254),
 * unique-local, NAT64, 6to4, Teredo, reserved and documentation blocks are not — an IPv4-mapped IPv6 address
 * is judged as its IPv4 address, and a public IPv6 address lies in 2000::/3.
 *
 * Defends: a model (or a page it read) steering the agent's machine into its own or its network's services.
 * Does not defend: a public address that is nonetheless internal (a host's own public IP, a VPN's range).
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The range ipaddr.js names for `text` ('unicast' for a public one), 'outside_2000::/3' or 'invalid'. */
export function addressRange(text: string): string {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  // node:net's strict forms only: ipaddr.js alone would also read '1.2.3' or octal '010.0.0.1' as IPv4.
  if (isIP(bare) === 0 || !ipaddr.isValid(bare)) return 'invalid';
  let parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  if (range !== 'unicast') return range;
  // 2000::/3: the first 16-bit group starts with the bits 001.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts[0]! >>> 13 !== 0b001) return 'outside_2000::/3';
  return range;
}

export function isPublicAddress(text: string): boolean {
  return addressRange(text) === 'unicast';
}
