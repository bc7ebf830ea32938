/**
 * Which of a seller's endpoints a request is sold as (HEAD is sold as GET). The path is the one the gate's path
 * rule accepted (request-target.ts) and the origin will receive, as written.
 * - an endpoint of the method whose path is the request's path byte for byte wins outright;
 * - else the candidates are the endpoint whose path is the request's as the paywall prices paths
 *   (`routePriceKey`: case, percent-encoding, duplicate and trailing slashes ignored — `/PREMIUM/` is a reading
 *   of `/premium`) and every path pattern that fits — the path as written, or its key, fitting the pattern as
 *   written or its literal text folded the same way (endpoint-pattern.ts: `/Reports/{id}` fits `/reports/x`);
 *   the dearest for this path is sold (its route prices included, route-price.ts; the folded exact endpoint,
 *   then the oldest pattern, on a tie): the buyer pays the most any reading of the path costs, so neither a free
 *   exact endpoint nor a broad cheap pattern sells a spelling that a case-sensitive origin serves as a dearer
 *   route, nor a broad cheap pattern one that a case-insensitive origin routes to a dearer pattern;
 * - an endpoint the seller has not priced (ingested without a price) is never sold: when it is the exact match,
 *   or one of the candidates, the request is refused (`unpriced`) rather than sold at another price.
 *
 * Defends against: a route bought at a cheaper endpoint's price — through a cheaper pattern, through another
 * spelling of a cheaper exact endpoint, or of a dearer pattern's literal text; an unpriced operation served as
 * free. Does not defend against: prices the seller set wrongly (they are the seller's settings); an origin that
 * serves one resource under two spellings the seller priced apart (the exact spelling is sold at its own price).
 */
import { matchParsedPathPattern } from '../shared/path-pattern.js';
import { priceOf } from '../x402/seller/paid-request.js';
import { routePriceKey } from '../x402/seller/seller-options.js';
import type { GateEndpointEntry, GateSellerEntry } from './seller-table.js';

export type EndpointMatch =
  { kind: 'sold'; entry: GateEndpointEntry } | { kind: 'unpriced'; entry: GateEndpointEntry } | { kind: 'none' };

function exactFor(entry: GateEndpointEntry, key: string): boolean {
  return routePriceKey(entry.endpoint.path) === key;
}

function patternFits(entry: GateEndpointEntry, path: string, key: string): boolean {
  const pattern = entry.pattern;
  return (
    pattern !== undefined &&
    (matchParsedPathPattern(pattern.written, path) ||
      matchParsedPathPattern(pattern.written, key) ||
      matchParsedPathPattern(pattern.folded, key))
  );
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

/** `entry` as a match: sold, or refused when the seller has not priced it. */
function matchOf(entry: GateEndpointEntry): EndpointMatch {
  return entry.endpoint.priced ? { kind: 'sold', entry } : { kind: 'unpriced', entry };
}

/** The endpoint `method path` is sold as, under the rules above. */
export function matchEndpoint(seller: GateSellerEntry, method: string, path: string): EndpointMatch {
  const wanted = method === 'HEAD' ? 'GET' : method;
  // The path as the paywall prices it: only needed once an endpoint of the method does not have it byte for byte.
  let key: string | undefined;
  const folded: GateEndpointEntry[] = [];
  const fitting: GateEndpointEntry[] = [];
  for (const entry of seller.endpoints) {
    if (entry.endpoint.method.toUpperCase() !== wanted) continue;
    if (entry.endpoint.path === path) return matchOf(entry);
    key ??= routePriceKey(path);
    if (exactFor(entry, key)) folded.push(entry);
    else if (patternFits(entry, path, key)) fitting.push(entry);
  }
  const candidates = folded.length === 0 ? fitting : [...folded, ...fitting];
  if (candidates.length === 0) return { kind: 'none' };
  const unpriced = candidates.find((e) => !e.endpoint.priced);
  if (unpriced) return { kind: 'unpriced', entry: unpriced };
  return { kind: 'sold', entry: dearest(candidates, path) };
}
