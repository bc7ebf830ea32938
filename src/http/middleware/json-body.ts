/**
 * Reads a JSON request body with a hard size limit. Non-JSON content types answer 415, oversize bodies
 * 413, unparsable JSON 400 `malformed_json`. An absent body reads as `undefined` (routes that create something
 * require an object). The parsed value lands in `ctx.state.body` and is validated by each route's zod schema.
 */
import type { Middleware } from 'koa';
import getRawBody from 'raw-body';
import { AppError } from '../../errors/app-error.js';

export function jsonBody(limitBytes: number): Middleware {
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
    if (charset && charset.toLowerCase() !== 'utf-8') throw new AppError('unsupported_media_type', { message: 'Send the body as UTF-8 JSON.' });
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
    try {
      ctx.state.body = JSON.parse(text) as unknown;
    } catch {
      throw new AppError('malformed_json');
    }
    return next();
  };
}
