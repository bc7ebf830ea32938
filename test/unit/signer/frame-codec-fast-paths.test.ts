/**
 * The frame codec's fast paths (signer/protocol/frame-codec.ts): a frame encodes to its length and the UTF-8 bytes
 * of its JSON whatever characters it holds (ASCII JSON is written as latin1, the rest through the UTF-8 encoder);
 * frames that lie whole in a chunk while the decoder holds nothing are decoded without a copy, with the same
 * refusals (an empty frame, an oversize length) as the held path, and the rest of the chunk is held for the next.
 */
import assert from 'node:assert/strict';
import { encodeFrame, FrameDecoder, type FrameEvent } from '../../../signer/protocol/frame-codec.js';
import { MAX_FRAME_BYTES } from '../../../signer/protocol/signer-protocol.js';

const expected = (value: unknown) => {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(json.length);
  return Buffer.concat([header, json]);
};

const shown = (events: FrameEvent[]) =>
  events.map((e) => (e.kind === 'frame' ? JSON.parse(e.payload.toString('utf8')) : e));

describe('frame codec fast paths', () => {
  it('encodes ASCII and non-ASCII JSON to its UTF-8 bytes behind their length', () => {
    const values = [
      { v: 1, id: '0', method: 'health', params: {} },
      { text: 'café' },
      { text: '€ and 𝄞' },
      { text: 'a lone \ud800 surrogate' },
      { text: '\u007f\u0080' },
      'x'.repeat(MAX_FRAME_BYTES - 2),
    ];
    for (const value of values) assert.deepEqual(encodeFrame(value), expected(value));
    // Two bytes a character: past the limit although its length in characters is under it.
    assert.throws(() => encodeFrame('é'.repeat(MAX_FRAME_BYTES / 2)), RangeError);
  });

  it('decodes whole frames of a chunk without copying them, and holds the rest of the chunk', () => {
    const frames = [{ a: 1 }, { b: 'x'.repeat(300) }, { c: [1, 2, 3] }];
    const partial = encodeFrame({ d: 'y'.repeat(200) });
    const chunk = Buffer.concat([...frames.map(encodeFrame), partial.subarray(0, 100)]);
    const decoder = new FrameDecoder();
    const events = decoder.push(chunk);
    assert.deepEqual(shown(events), frames);
    for (const e of events) assert.equal(e.kind === 'frame' && e.payload.buffer, chunk.buffer, 'a frame was copied');
    assert.equal(decoder.copiedBytes, 100, 'only the incomplete frame is held');
    assert.deepEqual(shown(decoder.push(partial.subarray(100))), [{ d: 'y'.repeat(200) }]);
  });

  it('reads a payload whose header came alone, from the next chunk as it is', () => {
    const frame = encodeFrame({ e: 'z'.repeat(50) });
    const decoder = new FrameDecoder();
    assert.deepEqual(decoder.push(frame.subarray(0, 4)), []);
    const rest = frame.subarray(4);
    const events = decoder.push(rest);
    assert.deepEqual(shown(events), [{ e: 'z'.repeat(50) }]);
    assert.equal(events[0]!.kind === 'frame' && events[0]!.payload.buffer, rest.buffer);
  });

  it('answers an empty frame and an oversize length in a whole chunk as in a split one, and nothing after', () => {
    const oversize = Buffer.alloc(4);
    oversize.writeUInt32BE(MAX_FRAME_BYTES + 1);
    const stream = Buffer.concat([encodeFrame({ a: 1 }), Buffer.alloc(4), oversize, encodeFrame({ b: 2 })]);
    const whole = new FrameDecoder();
    const events = whole.push(stream);
    assert.deepEqual(shown(events), [{ a: 1 }, { kind: 'empty' }, { kind: 'too_large', length: MAX_FRAME_BYTES + 1 }]);
    assert.deepEqual(whole.push(encodeFrame({ c: 3 })), []);
    const split = new FrameDecoder();
    const splitEvents = [...split.push(stream.subarray(0, 3)), ...split.push(stream.subarray(3))];
    assert.deepEqual(shown(splitEvents), shown(events));
  });
});
