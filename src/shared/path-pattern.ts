/**
 * Seller endpoint path patterns (`/items/{id}`, `/files/{name}.json`, `/v{major}/reports`): parsed and
 * matched segment by segment, with string comparisons only — no regular expression is ever built from a
 * pattern, so matching costs one pass over the route whatever the pattern holds.
 *
 * The grammar (also what the write schemas and OpenAPI ingest accept; see docs/security-model.md):
 * - an absolute path of at most 512 characters and 32 segments, split on `/`;
 * - a segment is literal text, or holds exactly one parameter `{name}` with optional literal text before
 *   and after it in the same segment (`{name}.json`, `v{major}`); at most 16 parameters, names distinct,
 *   1–64 characters of `A-Z a-z 0-9 _ . ~ -`;
 * - a parameter matches one or more characters of one route segment (never a `/`); a literal matches
 *   itself exactly; the route must have the same number of segments.
 *
 * Defends: event-loop stalls from catastrophic backtracking (a stored `/{a}{b}…{x}` compiled to a regex
 * used to block the API on one ledger report). A pattern that breaks the grammar — stored before it was
 * enforced — matches nothing. Does not defend: which endpoint wins when two patterns fit one route (the
 * caller takes the oldest), nor decode percent-escapes (routes are compared as reported).
 */

export const PATH_PATTERN_MAX_LENGTH = 512;
export const PATH_PATTERN_MAX_SEGMENTS = 32;
export const PATH_PATTERN_MAX_PARAMETERS = 16;
const PARAMETER_NAME_MAX_LENGTH = 64;
const PARAMETER_NAME_CHARS = new Set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.~-');

export type PatternSegment =
  { kind: 'literal'; text: string } | { kind: 'parameter'; name: string; prefix: string; suffix: string };

export type ParsedPathPattern = { ok: true; segments: readonly PatternSegment[] } | { ok: false; problem: string };

function isParameterName(name: string): boolean {
  if (name.length === 0 || name.length > PARAMETER_NAME_MAX_LENGTH) return false;
  for (const ch of name) if (!PARAMETER_NAME_CHARS.has(ch)) return false;
  return true;
}

/** One segment (no `/`) → its shape, or what is wrong with it. */
function parseSegment(segment: string): PatternSegment | string {
  const open = segment.indexOf('{');
  if (open === -1) return segment.includes('}') ? 'a "}" without its "{"' : { kind: 'literal', text: segment };
  const close = segment.indexOf('}', open + 1);
  if (close === -1) return 'a "{" without its "}"';
  const prefix = segment.slice(0, open);
  const name = segment.slice(open + 1, close);
  const suffix = segment.slice(close + 1);
  if (prefix.includes('}')) return 'a "}" without its "{"';
  if (name.includes('{') || suffix.includes('{') || suffix.includes('}'))
    return 'one parameter per segment (split "{a}{b}" into "/{a}/{b}")';
  if (!isParameterName(name))
    return `parameter names are 1 to ${PARAMETER_NAME_MAX_LENGTH} characters of A-Z a-z 0-9 _ . ~ -`;
  return { kind: 'parameter', name, prefix, suffix };
}

/** Parses a pattern under the grammar above; `problem` says, for a person, what breaks it. */
export function parsePathPattern(pattern: string): ParsedPathPattern {
  if (pattern.length > PATH_PATTERN_MAX_LENGTH)
    return { ok: false, problem: `at most ${PATH_PATTERN_MAX_LENGTH} characters` };
  if (!pattern.startsWith('/')) return { ok: false, problem: 'an absolute path such as /items/{id}' };
  const raw = pattern.slice(1).split('/');
  if (raw.length > PATH_PATTERN_MAX_SEGMENTS)
    return { ok: false, problem: `at most ${PATH_PATTERN_MAX_SEGMENTS} segments` };
  const segments: PatternSegment[] = [];
  const names = new Set<string>();
  for (const text of raw) {
    const segment = parseSegment(text);
    if (typeof segment === 'string') return { ok: false, problem: segment };
    if (segment.kind === 'parameter') {
      if (names.has(segment.name)) return { ok: false, problem: `parameter "${segment.name}" appears twice` };
      names.add(segment.name);
      if (names.size > PATH_PATTERN_MAX_PARAMETERS)
        return { ok: false, problem: `at most ${PATH_PATTERN_MAX_PARAMETERS} parameters` };
    }
    segments.push(segment);
  }
  return { ok: true, segments };
}

/** Does `route` (a request path) fit the parsed pattern? Linear in the route's length. */
export function matchParsedPathPattern(segments: readonly PatternSegment[], route: string): boolean {
  if (!route.startsWith('/')) return false;
  const parts = route.slice(1).split('/');
  if (parts.length !== segments.length) return false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const segment = segments[i]!;
    if (segment.kind === 'literal') {
      if (part !== segment.text) return false;
    } else if (
      part.length <= segment.prefix.length + segment.suffix.length ||
      !part.startsWith(segment.prefix) ||
      !part.endsWith(segment.suffix)
    ) {
      return false;
    }
  }
  return true;
}

/** Does `route` fit `pattern`? A pattern outside the grammar matches nothing. */
export function matchPathPattern(pattern: string, route: string): boolean {
  const parsed = parsePathPattern(pattern);
  return parsed.ok && matchParsedPathPattern(parsed.segments, route);
}
