/**
 * The body of an origin's answer as the gate reads it (src/gate/origin-body.ts), fed chunk by chunk as undici's
 * dispatch feeds it, under a controller that records what undici is told: held whole, or past the cap its first
 * chunks and an unread rest; streamed with back-pressure; the chunks that came with the headers kept and bounded;
 * a failure or a discard ends the exchange and is never a held answer.
 */
import assert from 'node:assert/strict';
import type { Dispatcher } from 'undici';
import { OriginBody } from '../../../src/gate/origin-body.js';

/** What undici's dispatch controller was told. */
function recordingController() {
  const told = { paused: false, pauses: 0, resumes: 0, aborted: undefined as Error | undefined };
  const controller = {
    pause() {
      told.paused = true;
      told.pauses++;
    },
    resume() {
      told.paused = false;
      told.resumes++;
    },
    abort(reason: Error) {
      told.aborted ??= reason;
    },
    get paused() {
      return told.paused;
    },
    get aborted() {
      return told.aborted !== undefined;
    },
    get reason() {
      return told.aborted ?? null;
    },
  };
  return { told, controller: controller as unknown as Dispatcher.DispatchController };
}

const bytes = (n: number, fill = 0x61) => Buffer.alloc(n, fill);

async function readAll(iterator: AsyncIterator<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for (;;) {
    const next = await iterator.next();
    if (next.done) return Buffer.concat(chunks);
    chunks.push(next.value as Buffer);
  }
}

describe('gate origin body: held, streamed, bounded, ended', () => {
  it('held whole: the chunks in order as one buffer of its own, resolved at the end and not before', async () => {
    const { controller } = recordingController();
    const body = new OriginBody(controller);
    const first = Buffer.from('hello, ');
    body.data(first);
    let resolved = false;
    const held = body.capture(1024).then((c) => ((resolved = true), c));
    body.data(Buffer.from('world'));
    await new Promise((r) => setImmediate(r));
    assert.equal(resolved, false, 'nothing is held as whole before the end');
    body.end();
    const captured = await held;
    assert.equal(captured.kind, 'bytes');
    if (captured.kind !== 'bytes') return;
    assert.equal(captured.bytes.toString(), 'hello, world');
    first.fill(0);
    assert.equal(captured.bytes.toString(), 'hello, world', 'a copy: the socket chunk may be reused');
  });

  it('an answer already complete when the gate asks is held at once; an empty one is zero bytes', async () => {
    const { controller } = recordingController();
    const body = new OriginBody(controller);
    body.data(Buffer.from('done'));
    body.end();
    const captured = await body.capture(1024);
    assert.equal(captured.kind === 'bytes' && captured.bytes.toString(), 'done');
    const empty = new OriginBody(recordingController().controller);
    empty.end();
    const none = await empty.capture(1024);
    assert.equal(none.kind === 'bytes' && none.bytes.length, 0);
  });

  it('past the cap: undici is paused, the chunks so far are the prefix, the rest is read from the source after', async () => {
    const { controller, told } = recordingController();
    const body = new OriginBody(controller);
    const held = body.capture(10);
    body.data(bytes(6, 0x61));
    body.data(bytes(6, 0x62));
    const captured = await held;
    assert.equal(captured.kind, 'oversize');
    if (captured.kind !== 'oversize') return;
    assert.ok(told.pauses >= 1, 'the origin is not read on while the answer is held');
    assert.deepEqual(Buffer.concat(captured.prefix), Buffer.concat([bytes(6, 0x61), bytes(6, 0x62)]));
    const rest = readAll(captured.rest);
    body.data(bytes(3, 0x63));
    body.end();
    assert.deepEqual(await rest, bytes(3, 0x63));
  });

  it('chunks that came before the choice are bounded: undici is paused past 64 KiB, resumed when the gate reads', async () => {
    const { controller, told } = recordingController();
    const body = new OriginBody(controller);
    body.data(bytes(40 * 1024));
    assert.equal(told.paused, false);
    body.data(bytes(40 * 1024));
    assert.equal(told.paused, true, 'paused past the early bound');
    const stream = body.stream();
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    await new Promise((r) => setImmediate(r));
    assert.equal(told.paused, false, 'resumed once the stream is read');
    body.end();
    await new Promise((r) => stream.once('end', r));
    assert.equal(Buffer.concat(chunks).length, 80 * 1024);
  });

  it('streamed: a full stream pauses undici, reading it resumes undici', async () => {
    const { controller, told } = recordingController();
    const body = new OriginBody(controller);
    const stream = body.stream();
    for (let i = 0; i < 4 && !told.paused; i++) body.data(bytes(16 * 1024));
    assert.equal(told.paused, true, 'a stream nobody reads stops the origin');
    stream.resume();
    await new Promise((r) => setImmediate(r));
    assert.equal(told.paused, false);
    body.end();
    await new Promise((r) => stream.once('end', r));
  });

  it('a failure before the end rejects the held answer and fails the stream; nothing is resolved as whole', async () => {
    const held = new OriginBody(recordingController().controller);
    const capture = held.capture(1024);
    held.data(Buffer.from('partial'));
    held.fail(new Error('other side closed'));
    await assert.rejects(capture, /other side closed/);
    await assert.rejects(held.capture(1024), /other side closed/, 'asked again: the same failure');

    const streamed = new OriginBody(recordingController().controller);
    const stream = streamed.stream();
    stream.resume();
    const failed = new Promise<Error>((resolve) => stream.once('error', resolve));
    streamed.fail(new Error('reset'));
    assert.match((await failed).message, /reset/);
  });

  it('discarded (time-out, buyer gone): the origin request is aborted and the held answer rejects', async () => {
    const { controller, told } = recordingController();
    const body = new OriginBody(controller);
    const capture = body.capture(1024);
    body.destroy(new Error('origin time-out'));
    assert.match(told.aborted?.message ?? '', /origin time-out/);
    await assert.rejects(capture, /origin time-out/);
    body.data(Buffer.from('late'));
    body.end();
    await assert.rejects(body.capture(1024), /origin time-out/, 'a late end does not make it whole');
  });

  it('a stream destroyed by its reader aborts the origin request; after a complete answer it does not', async () => {
    const cut = recordingController();
    const body = new OriginBody(cut.controller);
    body.stream().destroy();
    assert.ok(cut.told.aborted, 'the origin request is aborted');

    const whole = recordingController();
    const complete = new OriginBody(whole.controller);
    complete.data(Buffer.from('all'));
    complete.end();
    complete.stream().destroy();
    assert.equal(whole.told.aborted, undefined, 'nothing to abort');
  });
});
