/**
 * An endpoint's path pattern as the gate matches it (matching-endpoint.ts), parsed once when the seller table is
 * built (seller-table.ts), not per request: as written, and folded as the paywall folds a request path into its
 * price key (src/x402/seller/seller-options.ts `routePriceKey`: percent-decoded, lower-cased, empty segments from
 * duplicate or trailing slashes dropped) — each literal piece folded, parameters kept. The folded pattern is
 * matched against the request's key, so `GET /Reports/{id}` also fits `/reports/x` and `/REPORTS/x/`, as a
 * case-insensitive origin (Express's default) routes them to it.
 *
 * Defends against: a pattern with upper-case or escaped literal text being passed over for a cheaper pattern when
 * the request spells the literal another way. Does not defend against: a pattern outside the grammar
 * (src/shared/path-pattern.ts): it fits nothing, as before.
 */
import { parsePathPattern, type PatternSegment } from '../shared/path-pattern.js';

export interface EndpointPattern {
  /** The pattern as the seller wrote it: matched against the request's path and its key. */
  written: readonly PatternSegment[];
  /** Its literal text folded like a price key: matched against the request's key. */
  folded: readonly PatternSegment[];
}

/** A literal piece as `routePriceKey` folds text: decoded (when it decodes), lower-cased. */
function foldText(text: string): string {
  if (text === '') return text;
  let decoded = text;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    // kept as written, as routePriceKey keeps a path that does not decode
  }
  return decoded.toLowerCase();
}

function foldSegments(segments: readonly PatternSegment[]): readonly PatternSegment[] {
  const folded: PatternSegment[] = [];
  for (const segment of segments) {
    if (segment.kind === 'parameter')
      folded.push({ ...segment, prefix: foldText(segment.prefix), suffix: foldText(segment.suffix) });
    else if (segment.text !== '') folded.push({ kind: 'literal', text: foldText(segment.text) });
  }
  // The key of the root is "/": one empty segment.
  return folded.length === 0 ? [{ kind: 'literal', text: '' }] : folded;
}

/** The endpoint's pattern, parsed and folded; undefined without one, or for one outside the grammar. */
export function endpointPattern(pathPattern: string | null): EndpointPattern | undefined {
  if (pathPattern === null) return undefined;
  const parsed = parsePathPattern(pathPattern);
  if (!parsed.ok) return undefined;
  return { written: parsed.segments, folded: foldSegments(parsed.segments) };
}
