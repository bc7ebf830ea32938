/**
 * Length-prefixed framing for the signer socket: 4-byte big-endian payload length, then UTF-8 JSON.
 *
 * Defends: a peer that announces or sends more than MAX_FRAME_BYTES is cut off before the payload is
 * buffered (no unbounded memory growth); a zero-length frame is malformed. Truncated frames simply never
 * complete and are dropped when the connection closes.
 * Does not defend: slow-loris style peers; the server applies an idle timeout per connection.
 */
import { MAX_FRAME_BYTES } from './signer-protocol.js';

/** One allocation per frame: the JSON is written straight after its length. */
export function encodeFrame(payload: unknown): Buffer {
  const json = JSON.stringify(payload);
  const length = Buffer.byteLength(json, 'utf8');
  if (length > MAX_FRAME_BYTES) throw new RangeError(`frame of ${length} bytes exceeds ${MAX_FRAME_BYTES}`);
  const frame = Buffer.allocUnsafe(4 + length);
  frame.writeUInt32BE(length, 0);
  frame.write(json, 4, 'utf8');
  return frame;
}

export type FrameEvent = { kind: 'frame'; payload: Buffer } | { kind: 'too_large'; length: number } | { kind: 'empty' };

/** Incremental decoder: push chunks, get complete frames. After 'too_large' the stream is unusable. */
export class FrameDecoder {
  private buffer: Buffer = Buffer.alloc(0);
  private failed = false;

  constructor(private readonly maxFrameBytes: number = MAX_FRAME_BYTES) {}

  push(chunk: Buffer): FrameEvent[] {
    if (this.failed) return [];
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const events: FrameEvent[] = [];
    while (this.buffer.length >= 4) {
      const length = this.buffer.readUInt32BE(0);
      if (length > this.maxFrameBytes) {
        this.failed = true;
        this.buffer = Buffer.alloc(0);
        events.push({ kind: 'too_large', length });
        return events;
      }
      if (length === 0) {
        this.buffer = this.buffer.subarray(4);
        events.push({ kind: 'empty' });
        continue;
      }
      if (this.buffer.length < 4 + length) break;
      events.push({ kind: 'frame', payload: this.buffer.subarray(4, 4 + length) });
      this.buffer = this.buffer.subarray(4 + length);
    }
    return events;
  }
}
