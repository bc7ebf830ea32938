/**
 * Classifies an IP address as globally reachable or not, for requests made to URLs a tenant gave: the API's
 * (seller origin verification, OpenAPI ingest: src/api/net/vetted-fetch.ts) and the gate's connections to a
 * seller's origin (src/gate/origin-address.ts). In src/shared/ so both processes use the one classifier.
 *
 * Defends: server-side request forgery into our own or a neighbour's network. An address is global only
 * when ipaddr.js (2.5.0) puts it in no special-purpose range ('unicast'): loopback, RFC 1918 private,
 * carrier-grade NAT, link-local, multicast, broadcast, unspecified, benchmarking (198.18.0.0/15),
 * documentation and other reserved blocks, IPv6 unique-local, deprecated site-local (fec0::/10), NAT64
 * (64:ff9b::/96, 64:ff9b:1::/48), 6to4, Teredo, discard, ORCHID, … are all refused. An IPv4-mapped IPv6
 * address (::ffff:a.b.c.d) is judged as the IPv4 address it carries, and a global IPv6 address must also
 * lie in 2000::/3 (so ::a.b.c.d "IPv4-compatible" forms are refused).
 * Does not defend: a global address that is nonetheless ours (a public IP of this host or its VPC's NAT
 * gateway); run the API and the gate without such reachability, or add egress rules.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface AddressClass {
  /** The address as classified (IPv4-mapped IPv6 converted to IPv4), or the input when it did not parse. */
  address: string;
  /** ipaddr.js range name ('unicast' for global ones), 'outside_2000::/3' or 'invalid'. */
  range: string;
  global: boolean;
}

export function classifyAddress(text: string): AddressClass {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  // node:net's strict forms only: ipaddr.js alone would also read '1.2.3' or octal '010.0.0.1' as IPv4.
  if (isIP(bare) === 0 || !ipaddr.isValid(bare)) return { address: text, range: 'invalid', global: false };
  let parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  if (range !== 'unicast') return { address: parsed.toString(), range, global: false };
  // 2000::/3: the first 16-bit group starts with the bits 001.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts[0]! >>> 13 !== 0b001)
    return { address: parsed.toString(), range: 'outside_2000::/3', global: false };
  return { address: parsed.toString(), range, global: true };
}
