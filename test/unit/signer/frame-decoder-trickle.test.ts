/**
 * The frame decoder against a peer that trickles (signer/protocol/frame-codec.ts): a frame sent a byte per write
 * costs copies in proportion to its bytes (counted by the decoder, `copiedBytes`), not to their square, and
 * decodes to what one write would have; the oversize and empty-frame refusals hold however the bytes are split.
 */
import assert from 'node:assert/strict';
import { encodeFrame, FrameDecoder, type FrameEvent } from '../../../signer/protocol/frame-codec.js';
import { MAX_FRAME_BYTES } from '../../../signer/protocol/signer-protocol.js';

/** Each event as a comparable value: the frame's bytes as hex, or the refusal. */
const shown = (events: FrameEvent[]) =>
  events.map((e) => (e.kind === 'frame' ? e.payload.toString('hex') : e.kind === 'too_large' ? e : e.kind));

/** `stream` pushed in chunks of the sizes `sizes` gives, in turn (the last chunk takes what is left). */
function pushSplit(decoder: FrameDecoder, stream: Buffer, sizes: (i: number) => number): FrameEvent[] {
  const events: FrameEvent[] = [];
  for (let at = 0, i = 0; at < stream.length; i++) {
    const size = Math.max(1, sizes(i));
    events.push(...decoder.push(stream.subarray(at, at + size)));
    at += size;
  }
  return events;
}

describe('frame decoder against a trickling peer', () => {
  it('decodes a 256 KiB frame sent one byte per write with copies linear in its size', () => {
    const frame = encodeFrame('x'.repeat(MAX_FRAME_BYTES - 2));
    assert.equal(frame.length, 262_148);
    const decoder = new FrameDecoder();
    const events = pushSplit(decoder, frame, () => 1);
    assert.deepEqual(shown(events), [frame.subarray(4).toString('hex')]);
    // Each byte is copied at most twice: into the decoder's run, then into the joined frame. Joining the held
    // bytes again at every write would copy ~n²/2 = 34 GB.
    assert.ok(decoder.copiedBytes <= 2 * frame.length, `copied ${decoder.copiedBytes} bytes for ${frame.length}`);
  });

  it('decodes the same frames however the stream is split, and copies no byte more than twice', () => {
    const stream = Buffer.concat([
      encodeFrame({ a: 1 }),
      Buffer.alloc(4), // an empty frame
      encodeFrame({ b: 'y'.repeat(5000) }),
      encodeFrame({ c: 'z'.repeat(70_000) }),
      encodeFrame({ d: [1, 2, 3] }),
    ]);
    const whole = shown(new FrameDecoder().push(stream));
    assert.equal(whole.length, 5);
    // Fixed sizes, and a mix of tiny and large chunks (a small run after a large chunk, and the other way round).
    const splits: Array<(i: number) => number> = [
      () => 1,
      () => 3,
      () => 1023,
      () => 1024,
      () => 4096,
      (i) => [1, 2000, 7, 1024, 3, 16_385, 1][i % 7]!,
      (i) => ((i * 7919) % 3000) + 1,
    ];
    for (const sizes of splits) {
      const decoder = new FrameDecoder();
      assert.deepEqual(shown(pushSplit(decoder, stream, sizes)), whole);
      assert.ok(decoder.copiedBytes <= 2 * stream.length, `copied ${decoder.copiedBytes} of ${stream.length}`);
    }
  });

  it('refuses an oversize length prefix sent a byte at a time, before any payload, and then nothing more', () => {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(MAX_FRAME_BYTES + 1);
    const decoder = new FrameDecoder();
    const events = pushSplit(decoder, header, () => 1);
    assert.deepEqual(events, [{ kind: 'too_large', length: MAX_FRAME_BYTES + 1 }]);
    assert.deepEqual(decoder.push(encodeFrame({ a: 1 })), [], 'the stream is unusable after too_large');
  });
});
