/**
 * Which of a seller's endpoints a request is sold as. The path is the one the gate's path rule accepted
 * (request-target.ts) and the origin will receive; it is compared as the paywall prices paths (`routePriceKey`:
 * case, percent-encoding, duplicate and trailing slashes ignored), so `/PREMIUM/` is the `/premium` endpoint.
 * - an endpoint of the method with that exact path wins (HEAD is sold as GET);
 * - else, of the path patterns that fit, the dearest for this path (its route prices included; the oldest on a
 *   tie): a broad cheap pattern never sells a route a dearer pattern also covers;
 * - an endpoint the seller has not priced (ingested without a price) is never sold: when it is the exact match,
 *   or one of the patterns that fit, the request is refused (`unpriced`) rather than sold at another price.
 *
 * Defends against: a route bought at a cheaper endpoint's price, an unpriced operation served as free. Does not
 * defend against: prices the seller set wrongly (they are the seller's settings).
 */
import { matchPathPattern } from '../shared/path-pattern.js';
import { priceOf } from '../x402/seller/paid-request.js';
import { routePriceKey } from '../x402/seller/seller-options.js';
import type { GateEndpointEntry, GateSellerEntry } from './seller-table.js';

export type EndpointMatch =
  { kind: 'sold'; entry: GateEndpointEntry } | { kind: 'unpriced'; entry: GateEndpointEntry } | { kind: 'none' };

function exactFor(entry: GateEndpointEntry, key: string): boolean {
  return routePriceKey(entry.endpoint.path) === key;
}

function patternFits(entry: GateEndpointEntry, path: string, key: string): boolean {
  const pattern = entry.endpoint.path_pattern;
  return pattern !== null && (matchPathPattern(pattern, path) || matchPathPattern(pattern, key));
}

/** Every endpoint (any method) whose path or pattern covers `path`: what an OPTIONS preflight answers for. */
export function endpointsForPath(seller: GateSellerEntry, path: string): GateEndpointEntry[] {
  const key = routePriceKey(path);
  return seller.endpoints.filter((e) => exactFor(e, key) || patternFits(e, path, key));
}

/** The dearest of `entries` for `path`, the first on a tie. */
function dearest(entries: readonly GateEndpointEntry[], path: string): GateEndpointEntry {
  let best = entries[0]!;
  let bestPrice = priceOf(best.site.config, path);
  for (const entry of entries.slice(1)) {
    const price = priceOf(entry.site.config, path);
    if (price > bestPrice) [best, bestPrice] = [entry, price];
  }
  return best;
}

/** The endpoint `method path` is sold as, under the rules above. */
export function matchEndpoint(seller: GateSellerEntry, method: string, path: string): EndpointMatch {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const key = routePriceKey(path);
  const same = seller.endpoints.filter((e) => e.endpoint.method.toUpperCase() === wanted);
  const exact = same.find((e) => exactFor(e, key));
  if (exact) return exact.endpoint.priced ? { kind: 'sold', entry: exact } : { kind: 'unpriced', entry: exact };
  const fitting = same.filter((e) => patternFits(e, path, key));
  if (fitting.length === 0) return { kind: 'none' };
  const unpriced = fitting.find((e) => !e.endpoint.priced);
  if (unpriced) return { kind: 'unpriced', entry: unpriced };
  return { kind: 'sold', entry: dearest(fitting, path) };
}
