/**
 * The body of an origin's answer as undici's dispatch hands it over (origin-proxy.ts), read one of two ways, chosen
 * once by the gate (gate-port.ts):
 *  - `capture(maxBytes)`: held in memory for the paywall, as src/x402/seller/held-body.ts `captureStream` holds any
 *    stream — whole (`bytes`), or, past the cap, its first chunks and the unread rest (`oversize`). The chunks are
 *    gathered as they arrive, with no stream between the socket and the paywall: the answer of every paid request
 *    takes this way;
 *  - `stream()`: a Readable for an answer the gate passes through unheld (a free route, an origin's error), with
 *    back-pressure: undici stops reading the origin while the buyer's side is full.
 * Chunks that arrive before the choice (with the headers, in the same read) are kept, at most `EARLY_BYTES` before
 * undici is told to stop reading.
 *
 * Defends against: paid content leaving before settlement (nothing is written anywhere by this class), unbounded
 * memory (the cap, the early bound, back-pressure), an exchange left running when the gate gives up on it
 * (`destroy` aborts the origin request). Does not defend against: what the origin says (the caller filters it).
 */
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { CapturedBody } from '../x402/seller/held-body.js';

/** Bytes kept before the gate chose how to read: past them, undici stops reading the origin until it has. */
const EARLY_BYTES = 64 * 1024;

/** Why an answer the gate gave up on (a discard with no reason of its own) ended. */
const discarded = () => new Error('the origin answer was discarded');

interface Capture {
  maxBytes: number;
  resolve: (captured: CapturedBody) => void;
  reject: (err: Error) => void;
}

export class OriginBody {
  private chunks: Buffer[] = [];
  private total = 0;
  private ended = false;
  private failure: Error | undefined;
  private capturing: Capture | undefined;
  private readable: Readable | undefined;

  constructor(private readonly controller: Dispatcher.DispatchController) {}

  /** undici's next chunk. */
  data(chunk: Buffer): void {
    if (this.readable) {
      if (!this.readable.push(chunk)) this.controller.pause();
      return;
    }
    this.chunks.push(chunk);
    this.total += chunk.length;
    const capture = this.capturing;
    if (capture) {
      if (this.total > capture.maxBytes) this.overflow(capture);
    } else if (this.total > EARLY_BYTES) this.controller.pause();
  }

  /** undici read the whole answer. */
  end(): void {
    this.ended = true;
    if (this.readable) this.readable.push(null);
    else if (this.capturing) this.resolveBytes(this.capturing);
  }

  /** The exchange failed after the headers (the origin closed early, a time-out, the buyer left). */
  fail(err: Error): void {
    if (this.ended || this.failure) return;
    this.failure = err;
    if (this.readable) this.readable.destroy(err);
    else this.capturing?.reject(err);
    this.capturing = undefined;
  }

  /** Ends the exchange: the origin request is aborted and the body fails with `err`. */
  destroy(err: Error = discarded()): void {
    if (this.ended || this.failure) {
      this.readable?.destroy();
      return;
    }
    this.controller.abort(err);
    this.fail(err);
  }

  /** Holds the body up to `maxBytes`; resolves as held-body.ts `captureStream` does, rejects if the exchange fails. */
  capture(maxBytes: number): Promise<CapturedBody> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<CapturedBody>((resolve, reject) => {
      const capture = { maxBytes, resolve, reject };
      if (this.total > maxBytes) return this.overflow(capture);
      if (this.ended) return this.resolveBytes(capture);
      this.capturing = capture;
      this.controller.resume();
    });
  }

  /** The body as a stream, starting with what arrived so far; undici reads on as the stream is read. */
  stream(): Readable {
    if (this.readable) return this.readable;
    const readable = new Readable({
      read: () => this.controller.resume(),
      destroy: (err, callback) => {
        if (!this.ended && !this.failure) {
          this.failure = err ?? discarded();
          this.controller.abort(this.failure);
        }
        callback(err);
      },
    });
    this.readable = readable;
    for (const chunk of this.chunks) readable.push(chunk);
    this.chunks = [];
    if (this.failure) readable.destroy(this.failure);
    else if (this.ended) readable.push(null);
    return readable;
  }

  private resolveBytes(capture: Capture): void {
    this.capturing = undefined;
    // One copy of its own (a chunk is a view of undici's socket read), hashed and sent alike: nothing writes to it.
    const bytes = Buffer.concat(this.chunks, this.total);
    this.chunks = [];
    capture.resolve({ kind: 'bytes', bytes, replacement: bytes });
  }

  /** Past the cap: the chunks so far are the prefix, the rest is left unread in a paused stream. */
  private overflow(capture: Capture): void {
    this.capturing = undefined;
    this.controller.pause();
    const prefix = this.chunks;
    this.chunks = [];
    const source = this.stream();
    capture.resolve({ kind: 'oversize', prefix, rest: source[Symbol.asyncIterator](), source });
  }
}
