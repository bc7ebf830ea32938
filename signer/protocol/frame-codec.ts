/**
 * Length-prefixed framing for the signer socket: 4-byte big-endian payload length, then UTF-8 JSON.
 *
 * Defends: a peer that announces or sends more than MAX_FRAME_BYTES is cut off before the payload is
 * buffered (no unbounded memory growth); a zero-length frame is malformed. A frame trickled in many small
 * writes costs work in proportion to its bytes, never to their square: chunks are held as they come and
 * joined once, when the announced length is there (`copiedBytes` stays under twice what was pushed); chunks
 * smaller than SMALL_CHUNK_BYTES are copied into runs of RUN_BYTES, so a trickle cannot make the decoder hold
 * one Buffer (and its allocation, ~1 KiB) per byte. While nothing is held, the frames that lie whole in a chunk
 * are handed out as views of it, uncopied, and only the rest of the chunk is held. Truncated frames simply never
 * complete and are dropped when the connection closes.
 * Does not defend: slow-loris style peers; the server applies an idle timeout per connection.
 */
import { MAX_FRAME_BYTES } from './signer-protocol.js';

/** A chunk shorter than this is copied into the decoder's current run rather than held on its own. */
const SMALL_CHUNK_BYTES = 1024;
/** The size of each run small chunks are copied into. */
const RUN_BYTES = 16 * 1024;
const HEADER_BYTES = 4;

/**
 * One allocation per frame: the JSON is written straight after its length. JSON whose UTF-8 length equals its
 * length in UTF-16 units is all ASCII (every other character takes two bytes or more), and is written as latin1:
 * the same bytes, without the UTF-8 encoder.
 */
export function encodeFrame(payload: unknown): Buffer {
  const json = JSON.stringify(payload);
  const length = Buffer.byteLength(json, 'utf8');
  if (length > MAX_FRAME_BYTES) throw new RangeError(`frame of ${length} bytes exceeds ${MAX_FRAME_BYTES}`);
  const frame = Buffer.allocUnsafe(HEADER_BYTES + length);
  frame.writeUInt32BE(length, 0);
  frame.write(json, HEADER_BYTES, length, length === json.length ? 'latin1' : 'utf8');
  return frame;
}

export type FrameEvent = { kind: 'frame'; payload: Buffer } | { kind: 'too_large'; length: number } | { kind: 'empty' };

/** Incremental decoder: push chunks, get complete frames. After 'too_large' the stream is unusable. */
export class FrameDecoder {
  /** The bytes not yet decoded, in order (views of pushed chunks, or of runs). */
  private chunks: Buffer[] = [];
  private held = 0;
  /** Where small chunks are copied; only ever written past `runUsed`, so views already handed out stay intact. */
  private run: Buffer | undefined;
  private runUsed = 0;
  /** The payload length of the frame being read, once its header is read. */
  private announced: number | undefined;
  private failed = false;
  private copied = 0;

  constructor(private readonly maxFrameBytes: number = MAX_FRAME_BYTES) {}

  /** Bytes this decoder has copied so far (small chunks into runs, frames split across chunks into one Buffer). */
  get copiedBytes(): number {
    return this.copied;
  }

  push(chunk: Buffer): FrameEvent[] {
    if (this.failed) return [];
    const events: FrameEvent[] = [];
    // Nothing held: the frames that lie whole in this chunk are views of it, with no copy; only the rest is held.
    const at = this.held === 0 ? this.takeWhole(chunk, events) : 0;
    if (this.failed || at === chunk.length) return events;
    this.hold(at === 0 ? chunk : chunk.subarray(at));
    for (;;) {
      if (this.announced === undefined) {
        if (this.held < HEADER_BYTES) break;
        const length = this.take(HEADER_BYTES).readUInt32BE(0);
        if (length > this.maxFrameBytes) {
          this.fail();
          events.push({ kind: 'too_large', length });
          return events;
        }
        if (length === 0) {
          events.push({ kind: 'empty' });
          continue;
        }
        this.announced = length;
      }
      if (this.held < this.announced) break;
      events.push({ kind: 'frame', payload: this.take(this.announced) });
      this.announced = undefined;
    }
    return events;
  }

  /**
   * Decodes the frames at the start of `chunk` that it holds whole (or, with a header already read, the payload
   * announced) into `events`, with the same refusals as `push`; returns where the first incomplete frame starts.
   */
  private takeWhole(chunk: Buffer, events: FrameEvent[]): number {
    let at = 0;
    for (;;) {
      let length = this.announced;
      if (length === undefined) {
        if (chunk.length - at < HEADER_BYTES) return at;
        length = chunk.readUInt32BE(at);
        if (length > this.maxFrameBytes) {
          this.fail();
          events.push({ kind: 'too_large', length });
          return chunk.length;
        }
        if (length === 0) {
          at += HEADER_BYTES;
          events.push({ kind: 'empty' });
          continue;
        }
        if (chunk.length - at - HEADER_BYTES < length) return at;
        at += HEADER_BYTES;
      } else {
        if (chunk.length - at < length) return at;
        this.announced = undefined;
      }
      events.push({ kind: 'frame', payload: chunk.subarray(at, at + length) });
      at += length;
    }
  }

  private fail(): void {
    this.failed = true;
    this.chunks = [];
    this.held = 0;
    this.run = undefined;
  }

  /** Keeps a chunk: a large one as it is, a small one copied onto the end of the current run. */
  private hold(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.held += chunk.length;
    if (chunk.length >= SMALL_CHUNK_BYTES) {
      this.chunks.push(chunk);
      return;
    }
    if (!this.run || this.runUsed + chunk.length > this.run.length) {
      this.run = Buffer.allocUnsafe(RUN_BYTES);
      this.runUsed = 0;
    }
    const at = this.runUsed;
    chunk.copy(this.run, at);
    this.copied += chunk.length;
    this.runUsed += chunk.length;
    const last = this.chunks.at(-1);
    // The last view held ends where this chunk was written: widen it rather than hold another.
    if (last && last.buffer === this.run.buffer && last.byteOffset + last.length === this.run.byteOffset + at) {
      this.chunks[this.chunks.length - 1] = this.run.subarray(last.byteOffset - this.run.byteOffset, this.runUsed);
    } else {
      this.chunks.push(this.run.subarray(at, this.runUsed));
    }
  }

  /** The next `n` held bytes (n ≤ held): a view when one chunk holds them, else joined into one Buffer, once. */
  private take(n: number): Buffer {
    this.held -= n;
    const first = this.chunks[0]!;
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const joined = Buffer.allocUnsafe(n);
    let filled = 0;
    let used = 0;
    while (filled < n) {
      const chunk = this.chunks[used]!;
      const part = Math.min(chunk.length, n - filled);
      chunk.copy(joined, filled, 0, part);
      filled += part;
      if (part === chunk.length) used++;
      else this.chunks[used] = chunk.subarray(part);
    }
    this.chunks.splice(0, used);
    this.copied += n;
    return joined;
  }
}
