/**
 * Reads a JSON request body with a hard size limit. Non-JSON content types answer 415, oversize bodies
 * 413, unparsable JSON 400 `malformed_json`. An absent body reads as `undefined` (routes that create something
 * require an object). The parsed value lands in `ctx.state.body` and is validated by each route's zod schema;
 * its text in `ctx.state.bodyText`.
 *
 * Text no column can hold — NUL, or a lone surrogate (neither has a UTF-8 form) — is refused here, in any
 * string or key of the body, with 400 `invalid_request`: a field a schema lets through unchecked (an x402
 * entry's extra fields) cannot carry it further. Both can only arrive as `\u` escapes (JSON refuses a raw
 * control character in a string, and bytes that are not UTF-8 decode to U+FFFD), so a body without one is
 * not walked at all; one with one is walked once, without recursion. Other control characters are refused
 * per stored field by the route schemas (src/api/http/schemas/common-schemas.ts).
 *
 * Nesting and object members are bounded before the text is parsed (./json-shape-scan.ts): a body past
 * either bound answers 400 `body_too_complex` naming the bound (`limit`: depth or keys, and `max`), and no
 * object of it is ever built (TREASURY_JSON_MAX_DEPTH, TREASURY_JSON_MAX_KEYS).
 */
import type { Middleware } from 'koa';
import getRawBody from 'raw-body';
import { AppError } from '../../errors/app-error.js';
import { toStorableText } from '../schemas/common-schemas.js';
import { scanJsonShape, type JsonShapeLimits } from './json-shape-scan.js';

export interface JsonBodyLimits extends JsonShapeLimits {
  /** Bytes read at most (413 above). */
  limitBytes: number;
}

export function jsonBody(limits: JsonBodyLimits): Middleware {
  const { limitBytes } = limits;
  return async (ctx, next) => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD' || ctx.method === 'DELETE' || ctx.method === 'OPTIONS') {
      ctx.state.body = undefined;
      return next();
    }
    const length = ctx.request.length;
    const hasBody = ctx.req.headers['transfer-encoding'] !== undefined || (length !== undefined && length > 0);
    if (!hasBody) {
      ctx.state.body = undefined;
      return next();
    }
    if (!ctx.is('application/json')) throw new AppError('unsupported_media_type');
    const charset = ctx.request.charset;
    if (charset && charset.toLowerCase() !== 'utf-8')
      throw new AppError('unsupported_media_type', { message: 'Send the body as UTF-8 JSON.' });
    let text: string;
    try {
      text = await getRawBody(ctx.req, { limit: limitBytes, length, encoding: 'utf8' });
    } catch (err) {
      const type = (err as { type?: string }).type;
      if (type === 'entity.too.large') throw new AppError('payload_too_large', { fields: { limit_bytes: limitBytes } });
      throw new AppError('malformed_json', { message: 'The request body could not be read.' });
    }
    if (text.trim() === '') {
      ctx.state.body = undefined;
      return next();
    }
    const excess = scanJsonShape(text, limits);
    if (excess) throw new AppError('body_too_complex', { fields: { ...excess } });
    let body: unknown;
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      throw new AppError('malformed_json');
    }
    if (text.includes('\\u')) refuseUnstorableText(body);
    ctx.state.body = body;
    // The text it was parsed from: a route may answer a body seen before from memory (../memoized-validation.ts).
    ctx.state.bodyText = text;
    return next();
  };
}

/** Throws 400 `invalid_request` naming the first string or key of `body` that holds NUL or a lone surrogate. */
function refuseUnstorableText(body: unknown): void {
  // Each entry links to its parent: a path is spelt out only for the value refused.
  interface Node {
    value: unknown;
    key: string | number | undefined;
    parent: Node | undefined;
  }
  const stack: Node[] = [{ value: body, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { value } = node;
    if (typeof value === 'string') {
      if (!storable(value)) refuse(node);
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push({ value: value[i], key: i, parent: node });
    } else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (!storable(key)) refuse(node);
        stack.push({ value: inner, key, parent: node });
      }
    }
  }

  function refuse(node: Node): never {
    const keys: string[] = [];
    for (let n: Node | undefined = node; n?.key !== undefined; n = n.parent) keys.push(String(n.key));
    const full = keys.reverse().join('.');
    const path = toStorableText(full.length > 200 ? `${full.slice(0, 200)}…` : full);
    const issue = { path, message: 'must be well-formed Unicode without NUL characters' };
    throw new AppError('invalid_request', {
      message: `The request body is invalid: ${path ? `${path}: ` : ''}${issue.message}`,
      fields: { issues: [issue] },
    });
  }
}

const storable = (s: string) => s.isWellFormed() && !s.includes('\u0000');
