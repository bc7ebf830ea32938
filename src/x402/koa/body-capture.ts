/**
 * Holds a Koa response body until the payment is settled (the holding itself: ../seller/held-body.ts). Koa
 * bodies may be a string, Buffer, JSON value, Node stream, web ReadableStream, Blob or fetch Response; each is
 * read into memory up to `maxBytes`; a larger stream keeps its unread rest in the source.
 *
 * Defends against: paid content leaving before settlement (x402 issue #659, streamed writes); unbounded memory
 * use by a large body. Does not defend against: a handler that writes to `ctx.res` itself or sets
 * `ctx.respond = false` — that body is out of reach (the 200 goes out without a receipt;
 * docs/seller-middleware.md#rules-and-runtime-answers).
 */
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { captureStream, type CapturedBody } from '../seller/held-body.js';

export { discardBody, releaseOversize, type CapturedBody } from '../seller/held-body.js';

function isNodeStream(value: unknown): value is Readable {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as Readable).pipe === 'function' &&
    typeof (value as Readable).on === 'function'
  );
}

/**
 * Reads ctx.body after the handler ran. A stream that errors rejects (the caller treats it like a handler
 * failure: no settlement).
 */
export async function captureBody(ctx: Context, maxBytes: number): Promise<CapturedBody> {
  if (ctx.respond === false) return { kind: 'uncapturable', why: 'ctx.respond is false' };
  if (ctx.headerSent) return { kind: 'uncapturable', why: 'headers already sent' };
  const body: unknown = ctx.body;
  if (body === null || body === undefined) return { kind: 'empty' };
  if (typeof body === 'string') return { kind: 'bytes', bytes: Buffer.from(body, 'utf8'), replacement: undefined };
  if (Buffer.isBuffer(body)) return { kind: 'bytes', bytes: body, replacement: undefined };
  if (isNodeStream(body)) return captureStream(body, maxBytes);
  if (body instanceof ReadableStream)
    return captureStream(Readable.fromWeb(body as import('node:stream/web').ReadableStream), maxBytes);
  if (body instanceof Blob) {
    if (body.size <= maxBytes) {
      const bytes = Buffer.from(await body.arrayBuffer());
      return { kind: 'bytes', bytes, replacement: bytes };
    }
    return captureStream(Readable.fromWeb(body.stream() as import('node:stream/web').ReadableStream), maxBytes);
  }
  if (body instanceof Response) {
    if (!body.body) return { kind: 'bytes', bytes: Buffer.alloc(0), replacement: Buffer.alloc(0) };
    return captureStream(Readable.fromWeb(body.body as import('node:stream/web').ReadableStream), maxBytes);
  }
  // Anything else Koa serialises as JSON; serialise it once here so the hash covers the exact bytes sent.
  const json = JSON.stringify(body);
  const bytes = Buffer.from(json ?? 'null', 'utf8');
  return { kind: 'bytes', bytes, replacement: bytes };
}
