/**
 * The request body's sha256 for the `payment-identifier` fingerprint (../seller/payment-identifier-fingerprint.ts),
 * as far as the Koa middleware can know it without consuming the request stream (the seller's handler, after
 * the middleware, must still be able to read it): the raw body a body parser mounted before the middleware
 * kept (`ctx.request.rawBody`), else its parsed body (as canonical JSON), else what the headers say of it
 * (content-type and content-length) — then two retries with the same id and signed payment but different
 * bodies of the same length are not told apart.
 *
 * Defends against: a stored answer being replayed to a request with another body, where the body is known.
 * Does not defend against: the case above; mount a body parser before the middleware to close it.
 */
import type { Context } from 'koa';
import { bodySha256, canonicalJson } from '../seller/payment-identifier-fingerprint.js';

export function koaBodySha256(ctx: Context): string {
  const request = ctx.request as Context['request'] & { rawBody?: unknown; body?: unknown };
  if (typeof request.rawBody === 'string' || Buffer.isBuffer(request.rawBody)) return bodySha256(request.rawBody);
  if (request.body !== undefined) return bodySha256(`parsed:${canonicalJson(request.body)}`);
  const type = ctx.get('Content-Type');
  const length = ctx.get('Content-Length');
  const chunked = ctx.get('Transfer-Encoding');
  if (!type && !length && !chunked) return bodySha256(undefined);
  return bodySha256(`unread:${type}|${length}|${chunked}`);
}
