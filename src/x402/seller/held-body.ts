/**
 * A paid response body held until the payment is settled, whatever produced it (a Koa handler, a proxied
 * origin): read into memory up to `maxBytes`; a longer stream is not drained — its first chunks are kept and
 * the rest stays unread in the source, so nothing reaches the buyer before settlement either way. After
 * settlement the prefix and the rest go out as one stream and the content hash is computed while it flows.
 *
 * Defends against: paid content leaving before settlement (x402 issue #659, streamed writes); unbounded memory
 * use by a large body; a settled oversize answer going unreported because its stream was destroyed before it was
 * read (the buyer left during settlement: the end is still reported, once, without a hash). Does not defend
 * against: a producer that writes to the socket itself (the adapter reports that as `uncapturable`).
 */
import { createHash, type Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Readable as ReadableStream } from 'node:stream';

export type CapturedBody =
  /** No body (204, 304, explicit null). */
  | { kind: 'empty' }
  /** The whole body, as bytes; `replacement` is what the adapter puts back (undefined: leave the body as is). */
  | { kind: 'bytes'; bytes: Buffer; replacement: Buffer | undefined }
  /** A stream longer than the cap: the first chunks, and the unread rest. */
  | { kind: 'oversize'; prefix: Buffer[]; rest: AsyncIterator<unknown>; source: Readable }
  /** The producer bypassed the adapter; nothing can be held. */
  | { kind: 'uncapturable'; why: string };

export const toBuffer = (chunk: unknown): Buffer =>
  Buffer.isBuffer(chunk)
    ? chunk
    : typeof chunk === 'string'
      ? Buffer.from(chunk, 'utf8')
      : chunk instanceof Uint8Array
        ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
        : Buffer.from(String(chunk));

/**
 * Reads `source` up to `maxBytes` (whole: `bytes`; longer: `oversize`). A stream that errors, or closes before
 * its end, rejects. Read with its events (no async iterator and its promise per chunk: an origin's answer is
 * read on every paid request); past the cap the stream is paused and the rest left to an iterator, unread.
 */
export function captureStream(source: Readable, maxBytes: number): Promise<CapturedBody> {
  if (source.readableEnded || source.destroyed) return captureByIterator(source, maxBytes);
  return new Promise<CapturedBody>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const stop = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
    };
    const onData = (chunk: unknown) => {
      const buffer = toBuffer(chunk);
      chunks.push(buffer);
      total += buffer.length;
      if (total <= maxBytes) return;
      source.pause();
      stop();
      resolve({ kind: 'oversize', prefix: chunks, rest: source[Symbol.asyncIterator](), source });
    };
    const onEnd = () => {
      stop();
      source.on('error', ignoreLateError); // read whole: a later error has a listener (an unheard one ends the process)
      // One copy (the producer may reuse its chunks), hashed and sent alike: nothing writes to it.
      const bytes = Buffer.concat(chunks, total);
      resolve({ kind: 'bytes', bytes, replacement: bytes });
    };
    const onError = (err: unknown) => {
      stop();
      reject(err instanceof Error ? err : new Error(String(err)));
    };
    const onClose = () => onError(new Error('the body ended before it was complete'));
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onError);
    source.on('close', onClose);
  });
}

const ignoreLateError = () => undefined;

/** The same, through the stream's async iterator (a stream already ended or destroyed: it says which). */
async function captureByIterator(source: Readable, maxBytes: number): Promise<CapturedBody> {
  const rest = source[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const step = await rest.next();
    if (step.done) {
      const bytes = Buffer.concat(chunks, total);
      return { kind: 'bytes', bytes, replacement: bytes };
    }
    const chunk = toBuffer(step.value);
    chunks.push(chunk);
    total += chunk.length;
    if (total > maxBytes) return { kind: 'oversize', prefix: chunks, rest, source };
  }
}

/** Discards a held body (settlement failed): unread stream sources are destroyed. */
export function discardBody(captured: CapturedBody): void {
  if (captured.kind === 'oversize') {
    void captured.rest.return?.().catch(() => undefined);
    captured.source.destroy();
  }
}

/**
 * The stream sent for an oversize body after settlement: prefix, then the rest of the source. `onEnd` is called
 * exactly once: with the sha256 of everything sent, or with undefined when not all of it was — the source failed
 * midway, or the stream was destroyed first (the buyer left), also before it was ever read, when the replay never
 * started. An unfinished source is then discarded.
 */
export function releaseOversize(
  captured: Extract<CapturedBody, { kind: 'oversize' }>,
  onEnd: (sha256Hex: string | undefined) => void,
): Readable {
  const hash: Hash = createHash('sha256');
  let ended = false;
  const end = (sha256Hex: string | undefined) => {
    if (ended) return;
    ended = true;
    if (sha256Hex === undefined) discardBody(captured);
    onEnd(sha256Hex);
  };
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
      end(ok ? hash.digest('hex') : undefined);
    }
  }
  const stream = ReadableStream.from(replay(), { objectMode: false });
  // A generator that never started has no `finally` to run when the stream is destroyed: the close says it ended.
  stream.once('close', () => end(undefined));
  return stream;
}
