/**
 * A seller's endpoints compiled once into the lookup that attributes a reported route to an endpoint: the exact
 * method and path first (a map), else the oldest endpoint of that method whose path pattern fits the route,
 * patterns parsed once and grouped by method and segment count, so a route is compared only with the patterns
 * of its own shape. Pure: the caller loads the endpoints and keeps the compiled form
 * (src/api/sellers/ledger/endpoint-matcher-cache.ts).
 *
 * Defends: a report re-reading and re-parsing every pattern of its seller per row (a seller with thousands of
 * endpoints made one 100-row batch take seconds of the API's time). Matching itself stays the segment
 * comparison of ./path-pattern.ts (no regular expression), with its results: a pattern outside the grammar
 * matches nothing. Does not defend: the number of endpoints (bounded where they are written,
 * TREASURY_SELLER_MAX_ENDPOINTS), nor which of two fitting patterns the seller meant (the oldest wins).
 */
import { matchParsedPathPattern, parsePathPattern, type PatternSegment } from './path-pattern.js';

/** What the matcher needs of an endpoint; `endpoints` are given oldest first (created_at, id). */
export interface MatchableEndpoint {
  id: string;
  method: string;
  path: string;
  path_pattern: string | null;
}

interface CompiledPattern {
  id: string;
  segments: readonly PatternSegment[];
}

export interface EndpointMatcher {
  /** The endpoint a report of `method` (upper case) and `route` names, or null. */
  lookup(method: string, route: string): string | null;
  /** How many endpoints it was compiled from. */
  readonly size: number;
}

/** The number of segments matchParsedPathPattern splits `route` into (-1: not an absolute path). */
function segmentCount(route: string): number {
  if (!route.startsWith('/')) return -1;
  let n = 1;
  for (let i = 1; i < route.length; i++) if (route.charCodeAt(i) === 0x2f) n++;
  return n;
}

const exactKey = (method: string, path: string) => `${method} ${path}`;

/** Compiles `endpoints` (oldest first); the result never reads them again. */
export function compileEndpointMatcher(endpoints: readonly MatchableEndpoint[]): EndpointMatcher {
  const exact = new Map<string, string>();
  const patterns = new Map<string, Map<number, CompiledPattern[]>>();
  for (const e of endpoints) {
    const key = exactKey(e.method, e.path);
    if (!exact.has(key)) exact.set(key, e.id);
    if (e.path_pattern === null) continue;
    const parsed = parsePathPattern(e.path_pattern);
    if (!parsed.ok) continue;
    const byShape = patterns.get(e.method) ?? new Map<number, CompiledPattern[]>();
    patterns.set(e.method, byShape);
    const list = byShape.get(parsed.segments.length) ?? [];
    byShape.set(parsed.segments.length, list);
    list.push({ id: e.id, segments: parsed.segments });
  }
  return {
    size: endpoints.length,
    lookup(method, route) {
      const hit = exact.get(exactKey(method, route));
      if (hit !== undefined) return hit;
      const candidates = patterns.get(method)?.get(segmentCount(route));
      if (!candidates) return null;
      for (const c of candidates) if (matchParsedPathPattern(c.segments, route)) return c.id;
      return null;
    },
  };
}
