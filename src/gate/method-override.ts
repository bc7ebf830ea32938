/**
 * Method overrides: a request that the origin's framework could run as another method than the one on its
 * request line, which is the one the gate prices. Rack::MethodOverride (Rails, Sinatra), Laravel and Symfony,
 * express's `method-override`, Spring's HiddenHttpMethodFilter turn `POST /items` carrying
 * `X-HTTP-Method-Override: DELETE` or `_method=DELETE` into `DELETE /items` — so a free POST would buy a priced
 * DELETE. Such a request is refused (400 `gate_method_override_refused`, gate-server.ts) before it is matched to an
 * endpoint. The rule is decided on the headers the origin will get (proxy-headers.ts), not on the buyer's:
 * - a Connection header listing a header read here (Content-Type, Content-Length, an override header): the gate
 *   would read it and drop it on the way, so the origin would read the body another way (Rack reads a POST without
 *   a Content-Type as a form);
 * - an `X-HTTP-Method-Override`, `X-HTTP-Method` or `X-Method-Override` header (any case, `_` read as `-`) naming
 *   another method than the request line's (naming the same one changes nothing and passes);
 * - a `_method` parameter, whatever it names: in the query (split on `&` and `;`); in the body the gate read, as
 *   every origin could read it — a form when the media type (cut at `;`, `,` or a space, as Rack and PHP cut it)
 *   is `application/x-www-form-urlencoded` or absent, the parts of any `multipart/*` (named by Content-Disposition
 *   `name`/`name*`, any ` name=` on the line as Rack reads it, or a Content-ID), a top-level JSON key when the
 *   Content-Type says `json` anywhere (Laravel's test); on a POST, whatever the type, a body that read as a form
 *   names it. Names are compared as those frameworks read them: `+` as a space, percent-escapes decoded, any case,
 *   leading spaces dropped, a leading `.` or `[` read as `_` and a NUL ending the name (PHP), `_method[…]` too.
 * - on a POST with a body, a Content-Type that cannot be read one way: more than one media type (a `,`), or a
 *   multipart one whose boundary is missing or not plain — not a lower-case `boundary=` parameter, its value not
 *   1–70 RFC 2046 characters, or `boundary` written elsewhere in the header (Rack takes the last, PHP the first);
 *   or a multipart body with a part head origins could split into other headers (multipart-part-head.ts).
 * The body is the one the gate already read whole and counted (request-body.ts); nothing more is buffered.
 *
 * Defends against: a request priced as one method and run by the origin as another. Does not defend against: an
 * override under a name of the seller's own choosing (a custom header or parameter given to `method-override`), a
 * body the gate cannot read as sent (a `Content-Encoding`, a JSON body in UTF-16), an origin framework that reads
 * `_method` from a body type other than these on another method than POST.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isPlainPartHead } from './multipart-part-head.js';
import { phpPartNames } from './php-part-name.js';
import { buyerHeadersForOrigin, canonicalName, connectionListed } from './proxy-headers.js';

const OVERRIDE_HEADERS = new Set(['x-http-method-override', 'x-http-method', 'x-method-override']);

/** The headers this check reads: one a Connection header lists would be read here and never reach the origin. */
const READ_HEADERS = new Set(['content-type', 'content-length', ...OVERRIDE_HEADERS]);

const FORM = 'application/x-www-form-urlencoded';

/** An RFC 2046 boundary (bchars, 1–70, not ending in a space): unquoted, a token's share of them only. */
const UNQUOTED_BOUNDARY = /^[0-9A-Za-z'+_.-]{1,70}$/;
const QUOTED_BOUNDARY = /^"[0-9A-Za-z'()+_,./:=? -]{0,69}[0-9A-Za-z'()+_,./:=?-]"$/;

/** A JSON body is parsed only when it could name the parameter (the name itself, or a `\u` escape hiding it). */
const MAY_NAME_METHOD = /method|\\u/i;

const ASCII_ESCAPE = /^[0-7][0-9a-fA-F]$/;

/** `%XX` escapes of ASCII decoded, the rest kept (the name compared is ASCII; a bad escape is left as sent). */
function decodeAscii(text: string): string {
  if (!text.includes('%')) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === '%' && ASCII_ESCAPE.test(hex)) {
      out += String.fromCharCode(parseInt(hex, 16));
      i += 2;
    } else out += text[i];
  }
  return out;
}

/** Is `raw` (a parameter name as sent) `_method` as a framework reads it? */
function isMethodParameter(raw: string): boolean {
  const decoded = decodeAscii(raw.replaceAll('+', ' '));
  const nul = decoded.indexOf('\0');
  const name = (nul === -1 ? decoded : decoded.slice(0, nul)).trimStart().toLowerCase();
  const first = name[0];
  if (first !== '_' && first !== '.' && first !== '[') return false;
  const rest = name.slice(1);
  return rest === 'method' || rest.startsWith('method[');
}

/** Does a query string or a form-urlencoded body (`a=1&b=2`) hold a `_method` parameter? */
function formNamesMethod(text: string): boolean {
  if (!/method/i.test(decodeAscii(text))) return false;
  for (const pair of text.split(/[&;]/)) {
    const eq = pair.indexOf('=');
    if (isMethodParameter(eq === -1 ? pair : pair.slice(0, eq))) return true;
  }
  return false;
}

/** A header parameter's value (`name="x"`, `name=x`, `name*=utf-8''x`), unquoted. */
function parameterValue(value: string, extended: boolean): string {
  let v = value.trim();
  if (extended) v = v.slice(v.indexOf("'", v.indexOf("'") + 1) + 1);
  else if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1).replaceAll('\\"', '"');
  return v;
}

/** How much of a ` name=` value is compared: `_method[` escaped whole, and more (no origin unescapes it there). */
const NAME_VALUE_CHARS = 64;

/**
 * The start of every value a `name=` (any case) on `line` could give, as Rack reads it: after an optional `"`,
 * leading spaces skipped, up to the next `"` or `;` and at most NAME_VALUE_CHARS. One pass over the line (every
 * `name=` in `name=name=…` is its own value).
 */
function nameValues(line: string): string[] {
  const lower = line.toLowerCase();
  const values: string[] = [];
  let stop = -1; // the first `"` or `;` at or after the current value's start (only ever moves forward)
  for (let at = lower.indexOf('name='); at !== -1; at = lower.indexOf('name=', at + 1)) {
    let start = at + 'name='.length;
    if (line[start] === '"') start++;
    while (line[start] === ' ' || line[start] === '\t' || line[start] === '+') start++;
    if (stop < start) for (stop = start; stop < line.length && line[stop] !== '"' && line[stop] !== ';';) stop++;
    values.push(line.slice(start, Math.min(stop, start + NAME_VALUE_CHARS)));
  }
  return values;
}

/**
 * Could a multipart part's header block name the part `_method`? Its Content-Disposition `name` or `name*`
 * parameter (also as PHP reads it: php-part-name.ts), any `name=` on a line (Rack reads the last ` name=` of its
 * Content-Disposition line), or a Content-ID (Rack's name for a part without one).
 */
function partNamesMethod(head: string): boolean {
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const header = line.slice(0, colon).trim().toLowerCase();
    if (header === 'content-id' && isMethodParameter(line.slice(colon + 1))) return true;
    if (nameValues(line).some(isMethodParameter)) return true;
    if (header !== 'content-disposition') continue;
    if (phpPartNames(line.slice(colon + 1)).some(isMethodParameter)) return true;
    for (const param of line.slice(colon + 1).split(';')) {
      const eq = param.indexOf('=');
      if (eq === -1) continue;
      const key = param.slice(0, eq).trim().toLowerCase();
      if (
        (key === 'name' || key === 'name*') &&
        isMethodParameter(parameterValue(param.slice(eq + 1), key === 'name*'))
      )
        return true;
    }
  }
  return false;
}

/**
 * The boundary of a multipart Content-Type, or undefined when it has none that every origin reads alike: a
 * lower-case `boundary=` parameter (PHP finds the first `boundary`, case-sensitive first), its value an RFC 2046
 * boundary, quoted or not, and `boundary` written nowhere else (Rack takes the last `boundary=`).
 */
function boundaryOf(contentType: string): string | undefined {
  const lower = contentType.toLowerCase();
  const at = lower.indexOf('boundary');
  if (at === -1 || !contentType.startsWith('boundary=', at)) return undefined;
  if (!contentType.slice(0, at).trimEnd().endsWith(';')) return undefined;
  const semicolon = contentType.indexOf(';', at);
  const end = semicolon === -1 ? contentType.length : semicolon;
  const value = contentType.slice(at + 'boundary='.length, end);
  // `boundary` again only inside the value, and never as another `boundary=` there.
  if (lower.includes('boundary', end) || value.toLowerCase().includes('boundary=')) return undefined;
  if (UNQUOTED_BOUNDARY.test(value)) return value;
  return QUOTED_BOUNDARY.test(value) ? value.slice(1, -1) : undefined;
}

/**
 * Does a multipart body hold a part named `_method`? Every `--boundary` is looked at, wherever it is: a closing
 * one inside a value (not at a line start) does not end the parts for the origin, so it does not end them here.
 * On a POST, a part head that is not plain (multipart-part-head.ts) counts as naming it (fail closed).
 */
function multipartNamesMethod(body: Buffer, boundary: string, post: boolean): boolean {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const headStart = at + delimiter.length;
    const headEnd = body.indexOf('\r\n\r\n', headStart, 'latin1');
    const head = body.toString('latin1', headStart, headEnd === -1 ? body.length : headEnd);
    if ((post && !isPlainPartHead(head)) || partNamesMethod(head)) return true;
    if (headEnd === -1) return false;
    at = body.indexOf(delimiter, headEnd + 4);
  }
  return false;
}

/** Does a JSON body hold a top-level `_method` key? */
function jsonNamesMethod(body: Buffer): boolean {
  const text = body.toString('utf8');
  if (!MAY_NAME_METHOD.test(text)) return false;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false; // the origin cannot read it either
  }
  return (
    value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).some(isMethodParameter)
  );
}

/** The media type as Rack and PHP cut it: up to the first `;`, `,` or space, lower-cased ('' when absent). */
function mediaTypeOf(contentType: string): string {
  const end = contentType.search(/[;,\s]/);
  return (end === -1 ? contentType : contentType.slice(0, end)).toLowerCase();
}

/**
 * Does the body hold a `_method` parameter, read every way an origin could read it with this Content-Type? A
 * POST's Content-Type that cannot be read one way counts as naming it (fail closed).
 */
function bodyNamesMethod(body: Buffer, contentType: string, post: boolean): boolean {
  const media = mediaTypeOf(contentType);
  const json = contentType.toLowerCase().includes('json');
  if (post && contentType.includes(',')) return true; // two media types: which one the origin reads is not known
  if (json && jsonNamesMethod(body)) return true;
  if (media === '' || media === FORM) return formNamesMethod(body.toString('latin1'));
  if (media.startsWith('multipart/')) {
    const boundary = boundaryOf(contentType);
    if (boundary === undefined) return post;
    return multipartNamesMethod(body, boundary, post);
  }
  // Any other type: what it claims is not what every origin reads; a POST body read as a form must not name it.
  return post && !json && formNamesMethod(body.toString('latin1'));
}

/** The first value of a header (a repeated one is an array). */
const firstValue = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/** Does a Connection header list a header this check reads (so the origin would not get what was checked)? */
function hidesReadHeader(connection: string | string[] | undefined): boolean {
  for (const name of connectionListed(connection)) if (READ_HEADERS.has(name)) return true;
  return false;
}

/**
 * Does the request ask the origin to run another method than `method`? `headers` are the buyer's (the check reads
 * the ones that cross, proxy-headers.ts), `query` the target's (with its `?`, or ''), `body` the one the gate read
 * (undefined: none).
 */
export function asksMethodOverride(
  method: string,
  headers: IncomingHttpHeaders,
  query: string,
  body: Buffer | undefined,
): boolean {
  if (hidesReadHeader(headers.connection)) return true;
  const forwarded = buyerHeadersForOrigin(headers);
  for (const [name, value] of Object.entries(forwarded)) {
    if (value === undefined || !OVERRIDE_HEADERS.has(canonicalName(name))) continue;
    for (const v of Array.isArray(value) ? value : [value])
      if (v.trim().toUpperCase() !== method.toUpperCase()) return true;
  }
  if (query.length > 1 && formNamesMethod(query.slice(1))) return true;
  if (body === undefined || body.length === 0) return false;
  const contentType = (firstValue(forwarded['content-type']) ?? '').trim();
  return bodyNamesMethod(body, contentType, method.toUpperCase() === 'POST');
}
