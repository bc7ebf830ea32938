/**
 * Whether TREASURY_TRUSTED_PROXIES trusts so much of the address space that clients on the internet count as
 * proxies. Production mode refuses such a list (../config/production-mode.ts).
 *
 * Defends: every per-address rate limit (nonce, init, auth failures, discovery) escaped. When a client's own
 * address is trusted, the hop walk of ./client-address-key.ts goes on to the next X-Forwarded-For entry — which
 * the client wrote — so a fresh value per request is a fresh count (unlimited sign-in and bearer guessing).
 *
 * The rule, per range (after ./client-address-key.ts's parsing: IPv4-mapped ranges are IPv4 ranges):
 * - a /0 range is refused;
 * - an IPv4 range shorter than /8, or an IPv6 range shorter than /16, is refused unless it lies inside one
 *   non-global block: its first and last addresses are both non-global and of the same special-purpose range
 *   as ../../shared/address-class.ts classifies them (fc00::/7, fe80::/10, ff00::/8, space outside 2000::/3,
 *   224.0.0.0/4, … pass; 0.0.0.0/1, ::/1, 2000::/3 do not). At these lengths no named block has a global gap
 *   between its ends, so the two ends decide; a range spanning two blocks is refused even when all of it is
 *   non-global (no proxy lives there);
 * - anything longer passes: a proxy provider's published public ranges (/13 to /22, /32 IPv6) are legitimate.
 * Does not defend: a public /8 (or /16) that is not all proxies, nor a proxy that passes on a client's
 * X-Forwarded-For as received; name only proxies that overwrite or append the peer address.
 */
import ipaddr from 'ipaddr.js';
import { classifyAddress } from '../../shared/address-class.js';
import type { TrustedProxy } from './client-address-key.js';

/** Ranges at least this long are not judged (IPv4 /8, IPv6 /16). */
const SHORTEST_UNJUDGED = { ipv4: 8, ipv6: 16 } as const;

/** The first and last addresses of `address/bits`. */
function rangeEnds(address: TrustedProxy[0], bits: number): [string, string] {
  const bytes = address.toByteArray();
  const first: number[] = [];
  const last: number[] = [];
  bytes.forEach((byte, i) => {
    const kept = Math.max(0, Math.min(8, bits - i * 8)); // network bits in this byte
    const mask = (0xff << (8 - kept)) & 0xff;
    first.push(byte & mask);
    last.push((byte & mask) | (~mask & 0xff));
  });
  return [ipaddr.fromByteArray(first).toString(), ipaddr.fromByteArray(last).toString()];
}

/** True when every address of the range is non-global by the rule above (both ends, one named block). */
function withinOneNonGlobalBlock(address: TrustedProxy[0], bits: number): boolean {
  const [first, last] = rangeEnds(address, bits).map(classifyAddress);
  return !first!.global && !last!.global && first!.range === last!.range;
}

/** The first range of `trusted` that covers public addresses (as `address/bits`), or undefined. */
export function publicTrustedRange(trusted: readonly TrustedProxy[]): string | undefined {
  for (const [address, bits] of trusted) {
    if (bits >= SHORTEST_UNJUDGED[address.kind()]) continue;
    if (bits === 0 || !withinOneNonGlobalBlock(address, bits)) return `${address.toString()}/${bits}`;
  }
  return undefined;
}
