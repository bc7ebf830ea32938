/**
 * Method overrides: a request that the origin's framework could run as another method than the one on its
 * request line, which is the one the gate prices. Rack::MethodOverride (Rails), Laravel and Symfony, express's
 * `method-override`, Spring's HiddenHttpMethodFilter turn `POST /items` carrying `X-HTTP-Method-Override: DELETE`
 * or `_method=DELETE` into `DELETE /items` — so a free POST would buy a priced DELETE. Such a request is refused
 * (400 `gate_method_override_refused`, gate-server.ts) before it is matched to an endpoint, on every method:
 * - an `X-HTTP-Method-Override`, `X-HTTP-Method` or `X-Method-Override` header (any case, `_` read as `-`) naming
 *   another method than the request line's (naming the same one changes nothing and passes);
 * - a `_method` parameter, whatever it names: in the query (split on `&` and `;`), in an
 *   `application/x-www-form-urlencoded` body (or one without a Content-Type, which Rack reads as a form), a
 *   `multipart/form-data` body, or as a top-level key of a JSON body (Laravel reads it there). Names are compared
 *   as those frameworks read them: `+` as a space, percent-escapes decoded, any case, leading spaces dropped, a
 *   leading `.` or `[` read as `_` (PHP), `_method[…]` too.
 * The body is the one the gate already read whole and counted (request-body.ts); nothing more is buffered.
 *
 * Defends against: a request priced as one method and run by the origin as another. Does not defend against: an
 * override under a name of the seller's own choosing (a custom header or parameter given to `method-override`), a
 * body the gate cannot read as sent (a `Content-Encoding`, a JSON body in UTF-16).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { canonicalName } from './proxy-headers.js';

const OVERRIDE_HEADERS = new Set(['x-http-method-override', 'x-http-method', 'x-method-override']);

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
  const name = decodeAscii(raw.replaceAll('+', ' ')).trimStart().toLowerCase();
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

/** Does a multipart part's header block name the part `_method` (Content-Disposition `name`)? */
function partNamesMethod(head: string): boolean {
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon === -1 || line.slice(0, colon).trim().toLowerCase() !== 'content-disposition') continue;
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

/** The `boundary` parameter of a multipart Content-Type, or undefined. */
function boundaryOf(contentType: string): string | undefined {
  for (const param of contentType.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq !== -1 && param.slice(0, eq).trim().toLowerCase() === 'boundary') {
      const value = parameterValue(param.slice(eq + 1), false);
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}

/** Does a multipart/form-data body hold a part named `_method`? */
function multipartNamesMethod(body: Buffer, boundary: string): boolean {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const headStart = at + delimiter.length;
    if (body[headStart] === 0x2d && body[headStart + 1] === 0x2d) return false; // the closing delimiter
    const headEnd = body.indexOf('\r\n\r\n', headStart, 'latin1');
    if (headEnd === -1) return partNamesMethod(body.toString('latin1', headStart));
    if (partNamesMethod(body.toString('latin1', headStart, headEnd))) return true;
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

/** Does the body, read as its Content-Type says, hold a `_method` parameter? Rack reads a body without one as a form. */
function bodyNamesMethod(body: Buffer, contentType: string): boolean {
  const media = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (media === '' || media === 'application/x-www-form-urlencoded') return formNamesMethod(body.toString('latin1'));
  if (media === 'multipart/form-data') {
    const boundary = boundaryOf(contentType);
    return boundary !== undefined && multipartNamesMethod(body, boundary);
  }
  if (media.endsWith('/json') || media.endsWith('+json')) return jsonNamesMethod(body);
  return false;
}

/** The first value of a header (a repeated one is an array). */
const firstValue = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/**
 * Does the request ask the origin to run another method than `method`? `query` is the target's (with its `?`, or
 * ''), `body` the one the gate read (undefined: none).
 */
export function asksMethodOverride(
  method: string,
  headers: IncomingHttpHeaders,
  query: string,
  body: Buffer | undefined,
): boolean {
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || !OVERRIDE_HEADERS.has(canonicalName(name))) continue;
    for (const v of Array.isArray(value) ? value : [value])
      if (v.trim().toUpperCase() !== method.toUpperCase()) return true;
  }
  if (query.length > 1 && formNamesMethod(query.slice(1))) return true;
  return body !== undefined && body.length > 0 && bodyNamesMethod(body, firstValue(headers['content-type']) ?? '');
}
