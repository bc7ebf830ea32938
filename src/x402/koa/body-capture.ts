/**
 * Holds a Koa response body until the payment is settled. Koa bodies may be a string, Buffer, JSON value,
 * Node stream, web ReadableStream, Blob or fetch Response; each is read into memory up to `maxBytes`.
 * A larger stream is not drained: its first `maxBytes` are kept and the rest stays unread in the source, so
 * nothing reaches the buyer before settlement either way; after settlement the prefix and the rest are sent
 * as one stream and the content hash is computed while it flows.
 *
 * Defends against: paid content leaving before settlement (x402 issue #659, streamed writes); unbounded memory
 * use by a large body. Does not defend against: a handler that writes to `ctx.res` itself or sets
 * `ctx.respond = false` — that body is out of reach (the 200 goes out without a receipt;
 * docs/seller-middleware.md#rules-and-runtime-answers).
 */
import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Context } from 'koa';

export type CapturedBody =
  /** No body (204, 304, explicit null). */
  | { kind: 'empty' }
  /** The whole body, as bytes; `replacement` is what to put back in ctx.body (undefined: leave it as is). */
  | { kind: 'bytes'; bytes: Buffer; replacement: Buffer | undefined }
  /** A stream longer than the cap: the first chunks, and the unread rest. */
  | { kind: 'oversize'; prefix: Buffer[]; rest: AsyncIterator<unknown>; source: Readable }
  /** The handler bypassed Koa's response; nothing can be held. */
  | { kind: 'uncapturable'; why: string };

function isNodeStream(value: unknown): value is Readable {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as Readable).pipe === 'function' &&
    typeof (value as Readable).on === 'function'
  );
}

const toBuffer = (chunk: unknown): Buffer =>
  Buffer.isBuffer(chunk)
    ? chunk
    : typeof chunk === 'string'
      ? Buffer.from(chunk, 'utf8')
      : chunk instanceof Uint8Array
        ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
        : Buffer.from(String(chunk));

async function captureStream(source: Readable, maxBytes: number): Promise<CapturedBody> {
  const rest = source[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const step = await rest.next();
    if (step.done)
      return { kind: 'bytes', bytes: Buffer.concat(chunks, total), replacement: Buffer.concat(chunks, total) };
    const chunk = toBuffer(step.value);
    chunks.push(chunk);
    total += chunk.length;
    if (total > maxBytes) return { kind: 'oversize', prefix: chunks, rest, source };
  }
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

/** Discards a held body (settlement failed): unread stream sources are destroyed. */
export function discardBody(captured: CapturedBody): void {
  if (captured.kind === 'oversize') {
    void captured.rest.return?.().catch(() => undefined);
    captured.source.destroy();
  }
}

/**
 * The stream sent for an oversize body after settlement: prefix, then the rest of the source. `onEnd` gets the
 * sha256 of everything sent, or undefined when the source failed midway.
 */
export function releaseOversize(
  captured: Extract<CapturedBody, { kind: 'oversize' }>,
  onEnd: (sha256Hex: string | undefined) => void,
): Readable {
  const hash: Hash = createHash('sha256');
  async function* replay() {
    let ok = false;
    try {
      for (const chunk of captured.prefix) {
        hash.update(chunk);
        yield chunk;
      }
      for (;;) {
        const step = await captured.rest.next();
        if (step.done) break;
        const chunk = toBuffer(step.value);
        hash.update(chunk);
        yield chunk;
      }
      ok = true;
    } finally {
      onEnd(ok ? hash.digest('hex') : undefined);
    }
  }
  return Readable.from(replay(), { objectMode: false });
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
