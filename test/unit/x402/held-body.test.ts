/**
 * The release of a settled answer larger than what is held (src/x402/seller/held-body.ts `releaseOversize`):
 * the paywall reports the payment's ledger row from its end callback, so that callback must run exactly once —
 * with the sha256 of everything sent when the stream is read to its end, and without a hash when it is not: the
 * source failed, or the stream was destroyed (the buyer left), also before it was ever read. An unfinished source
 * is discarded rather than left paused.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setImmediate as tick } from 'node:timers/promises';
import { captureStream, releaseOversize, type CapturedBody } from '../../../src/x402/seller/held-body.js';

const CHUNKS = Array.from({ length: 8 }, (_, i) => Buffer.alloc(64, 65 + i));

/** An answer of CHUNKS (or failing after `failAfter` of them), held up to 100 bytes: oversize. */
async function oversize(failAfter?: number): Promise<Extract<CapturedBody, { kind: 'oversize' }>> {
  const chunks = function* () {
    for (const [i, chunk] of CHUNKS.entries()) {
      if (i === failAfter) throw new Error('the origin went away');
      yield chunk;
    }
  };
  const captured = await captureStream(Readable.from(chunks()), 100);
  assert.equal(captured.kind, 'oversize');
  return captured as Extract<CapturedBody, { kind: 'oversize' }>;
}

/** Releases `captured`, recording each end callback. */
function release(captured: Extract<CapturedBody, { kind: 'oversize' }>) {
  const ends: Array<string | undefined> = [];
  const stream = releaseOversize(captured, (hash) => ends.push(hash));
  const closed = new Promise((resolve) => stream.once('close', resolve));
  stream.on('error', () => undefined);
  return { stream, ends, closed };
}

describe('x402 seller: an oversize answer released after settlement ends once', () => {
  it('read whole: the sha256 of everything sent, once', async () => {
    const { stream, ends, closed } = release(await oversize());
    const sent: Buffer[] = [];
    for await (const chunk of stream) sent.push(chunk as Buffer);
    await closed;
    await tick();
    assert.deepEqual(Buffer.concat(sent), Buffer.concat(CHUNKS));
    assert.deepEqual(ends, [createHash('sha256').update(Buffer.concat(CHUNKS)).digest('hex')]);
  });

  it('destroyed before it is read (the buyer left during settlement): ended once, no hash, source discarded', async () => {
    const captured = await oversize();
    const { stream, ends, closed } = release(captured);
    stream.destroy();
    await closed;
    await tick();
    assert.deepEqual(ends, [undefined]);
    assert.equal(captured.source.destroyed, true);
  });

  it('destroyed midway: ended once, no hash, source discarded', async () => {
    const captured = await oversize();
    const { stream, ends, closed } = release(captured);
    const first = await new Promise((resolve) => stream.once('data', resolve));
    assert.ok(first);
    stream.destroy();
    await closed;
    await tick();
    assert.deepEqual(ends, [undefined]);
    assert.equal(captured.source.destroyed, true);
  });

  it('the source failing midway: ended once, no hash', async () => {
    const { stream, ends, closed } = release(await oversize(4));
    stream.resume();
    await closed;
    await tick();
    assert.deepEqual(ends, [undefined]);
  });
});
