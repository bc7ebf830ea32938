/**
 * The path rule (docs/security-model.md#the-gates-path-rule), one implementation for both places that price a
 * request path: the gate reads its request target with `readRequestTarget` (src/gate/request-target.ts) and the
 * Koa middleware checks `ctx.path` with `requestPathProblem` (./refused-path.ts, ../koa/x402-koa.ts). A path is
 * refused or accepted as is — never rewritten by a second parser: what is priced and what is served (the gate's
 * origin request line, the Koa handler's `ctx.path`) are the same string. Pure, no I/O.
 *
 * A target is refused when an origin could resolve it to another path than the one priced:
 * - a character outside RFC 3986's path (or query) characters — `\`, spaces, controls, `#`, `{`, non-ASCII…;
 * - a `%` not followed by two hex digits, or one encoding `.`, `/`, `\`, `%` or a control character
 *   (`%2e`, `%2f`, `%5c`, `%25`, `%00`… in either case), or escapes that are not UTF-8 (`%c0%ae`);
 * - a dot segment (`.`, `..`, any run of dots, also before a `;` parameter as in `..;`) or a segment that
 *   becomes one, or holds a slash or backslash, under Unicode compatibility folding (`．．`, `／`);
 * - a `;` in the path, raw or escaped (`%3b`): servlet containers (Tomcat, Jetty, Spring) cut `;…` path
 *   parameters off a segment, so `/items/premium;v=1` is served as `/items/premium` while a pattern such as
 *   `/items/{id}` would price it as another segment (the query may hold `;`);
 * - a segment whose decoded text changes under Unicode compatibility normalisation (NFKC: `%EF%BD%90` for a
 *   fullwidth `ｐ`, ligatures, a decomposed accent), which an origin that normalises serves as another route;
 * - an empty segment (`//`) anywhere but as a single trailing slash;
 * - more than MAX_TARGET_LENGTH characters.
 * A bare `?` (an empty query) is dropped; nothing else is changed.
 *
 * Defends against: a path priced as one route and served as another (`/free/..\paid`, `/free/%2e%2e/paid`,
 * `/data/./premium.csv` before a static file server, a cheap pattern's segment hiding a traversal or a `;`
 * parameter, a compatibility look-alike of a dearer route), double-decoding origins (`%252e`). Does not defend
 * against: an origin that maps two plain, distinct paths to one resource (case, trailing slash: priced as the
 * paywall prices paths, ./seller-option-checks.ts `routePriceKey`, the dearer reading winning, ./route-price.ts
 * and src/gate/matching-endpoint.ts); a handler or origin that reads its path from somewhere else than the one
 * checked (a header such as `X-Original-URL`: the gate drops them, src/gate/proxy-headers.ts; the Koa middleware
 * does not).
 */

export const MAX_TARGET_LENGTH = 8192;

export type RequestTarget =
  { ok: true; path: string; query: string; url: string } | { ok: false; problem: TargetProblem };

export type TargetProblem =
  | 'not_origin_form'
  | 'too_long'
  | 'character'
  | 'escape'
  | 'encoded_separator'
  | 'not_utf8'
  | 'dot_segment'
  | 'path_parameter'
  | 'not_canonical'
  | 'empty_segment';

/** RFC 3986 unreserved, sub-delims, ':' and '@' (pchar without pct-encoded). */
const PCHAR = new Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@");
const HEX = new Set('0123456789abcdefABCDEF');
/** Bytes an escape may not carry in the path: '.', '/', '\', '%'. */
const SEPARATOR_BYTES = new Set([0x2e, 0x2f, 0x5c, 0x25]);

/** Checks characters and escapes of one part; `extra` are the characters allowed beside pchar. */
function checkChars(text: string, extra: string, inPath: boolean): TargetProblem | undefined {
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '%') {
      if (!HEX.has(text[i + 1] ?? '') || !HEX.has(text[i + 2] ?? '')) return 'escape';
      const byte = parseInt(text.slice(i + 1, i + 3), 16);
      if (byte < 0x20 || byte === 0x7f) return 'escape';
      if (inPath && SEPARATOR_BYTES.has(byte)) return 'encoded_separator';
      i += 2;
    } else if (!PCHAR.has(ch) && !extra.includes(ch)) return 'character';
  }
  return undefined;
}

/** Is this decoded, folded segment a dot segment (`.`, `..`, `...`, also `..;param`)? */
function isDotSegment(segment: string): boolean {
  const semi = segment.indexOf(';');
  const base = semi === -1 ? segment : segment.slice(0, semi);
  if (base.length === 0) return false;
  for (const ch of base) if (ch !== '.') return false;
  return true;
}

function checkSegments(path: string): TargetProblem | undefined {
  const segments = path.slice(1).split('/');
  for (let i = 0; i < segments.length; i++) {
    const raw = segments[i]!;
    if (raw === '') {
      if (i === segments.length - 1) continue; // a single trailing slash (or the root "/")
      return 'empty_segment';
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      return 'not_utf8';
    }
    const folded = decoded.normalize('NFKC');
    if (folded.includes('/') || folded.includes('\\')) return 'encoded_separator';
    if (isDotSegment(decoded) || isDotSegment(folded)) return 'dot_segment';
    if (folded.includes(';')) return 'path_parameter';
    if (folded !== decoded) return 'not_canonical';
  }
  return undefined;
}

/** Why the rule refuses a request path (no query: `/a/b`, as Koa's `ctx.path` holds it), or undefined. */
export function requestPathProblem(path: string): TargetProblem | undefined {
  if (!path.startsWith('/')) return 'not_origin_form';
  if (path.length > MAX_TARGET_LENGTH) return 'too_long';
  return checkChars(path, '/', true) ?? checkSegments(path);
}

/** Reads a request target (`/path?query`) under the rule above. */
export function readRequestTarget(rawUrl: string): RequestTarget {
  if (!rawUrl.startsWith('/')) return { ok: false, problem: 'not_origin_form' };
  if (rawUrl.length > MAX_TARGET_LENGTH) return { ok: false, problem: 'too_long' };
  const q = rawUrl.indexOf('?');
  const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
  const rawQuery = q === -1 ? '' : rawUrl.slice(q);
  const problem = checkChars(path, '/', true) ?? checkChars(rawQuery.slice(1), '/?', false) ?? checkSegments(path);
  if (problem) return { ok: false, problem };
  const query = rawQuery === '?' ? '' : rawQuery;
  return { ok: true, path, query, url: path + query };
}
