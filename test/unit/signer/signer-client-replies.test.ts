/**
 * The signer client (signer/protocol/signer-client.ts) against a scripted signer on a unix socket: a reply is
 * held to the envelope and to the method's result schema in one parse, and settles only the request it names —
 * a result that fails its schema rejects with `internal_error`, a refusal rejects with its code and details, and
 * a frame that is not a reply (an extra envelope key, a wrong version, not JSON, an unknown id) settles nothing;
 * requests share one timer per connection, each still failing with `hsm_unavailable` once its own timeout passed
 * (those answered before it are not failed); ids are unique on a connection, across reconnects too.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { once } from 'node:events';
import { SignerClient, SignerError } from '../../../signer/protocol/signer-client.js';
import { encodeFrame, FrameDecoder } from '../../../signer/protocol/frame-codec.js';
import { fileTempDir } from '../../support/temp-dirs.js';

interface Seen {
  id: string;
  method: string;
  answer: (reply: unknown) => void;
}

/** A signer that hands each request it reads to the test, which answers it (or not) with any frame. */
async function scriptedSigner(socketPath: string) {
  const requests: Seen[] = [];
  const waiters: Array<() => void> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const decoder = new FrameDecoder();
    socket.on('data', (chunk: Buffer) => {
      for (const event of decoder.push(chunk)) {
        if (event.kind !== 'frame') continue;
        const { id, method } = JSON.parse(event.payload.toString('utf8')) as { id: string; method: string };
        requests.push({ id, method, answer: (reply) => socket.write(encodeFrame(reply)) });
        waiters.shift()?.();
      }
    });
  });
  server.listen(socketPath);
  await once(server, 'listening');
  return {
    requests,
    /** Resolves once `n` requests have arrived in all. */
    async received(n: number): Promise<void> {
      while (requests.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    dropConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const HEALTH = { status: 'ok', backend: 'pkcs11', protocol_version: 1 } as const;
const hex = (bytes: number) => `0x${'ab'.repeat(bytes)}`;
const SIGNATURE = { signature: hex(65), r: hex(32), s: hex(32), v: 27, digest: hex(32) } as const;

async function rejection(promise: Promise<unknown>): Promise<SignerError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof SignerError, String(err));
    return err;
  }
  assert.fail('the call did not fail');
}

describe('signer client: replies, time-outs and ids', () => {
  let signer: Awaited<ReturnType<typeof scriptedSigner>>;
  let socketPath: string;
  const clients: SignerClient[] = [];
  const client = (timeoutMs = 60_000) => {
    const c = new SignerClient({ socketPath, timeoutMs });
    clients.push(c);
    return c;
  };

  beforeEach(async () => {
    socketPath = path.join(fileTempDir('signer-client-'), 's.sock');
    signer = await scriptedSigner(socketPath);
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await signer.close();
  });

  it('resolves a result that passes its schema, with the fields the schema keeps', async () => {
    const c = client();
    const health = c.health();
    const sign = c.call('sign_transfer_authorization', {} as never);
    await signer.received(2);
    const [h, s] = signer.requests;
    s!.answer({ v: 1, id: s!.id, ok: true, result: SIGNATURE });
    h!.answer({ v: 1, id: h!.id, ok: true, result: HEALTH });
    assert.deepEqual(await health, HEALTH);
    assert.deepEqual(await sign, SIGNATURE);
  });

  it('rejects a result that fails its schema with internal_error, and a refusal with its code and details', async () => {
    const c = client();
    const bad = c.call('sign_transfer_authorization', {} as never);
    const refused = c.call('sign_transfer_authorization', {} as never);
    const other = c.health();
    await signer.received(3);
    const [b, r, o] = signer.requests;
    b!.answer({ v: 1, id: b!.id, ok: true, result: { ...SIGNATURE, v: 29 } });
    r!.answer({
      v: 1,
      id: r!.id,
      ok: false,
      error: { code: 'limit_exceeded', message: 'm', details: { limit: 'wallet_amount_day', headroom: '7' } },
    });
    // A health result is not a signature: each reply is held to its own request's method.
    o!.answer({ v: 1, id: o!.id, ok: true, result: SIGNATURE });
    const [badErr, refusedErr, otherErr] = await Promise.all([rejection(bad), rejection(refused), rejection(other)]);
    assert.equal(badErr.code, 'internal_error');
    assert.match(badErr.message, /sign_transfer_authorization failed validation/);
    assert.equal(refusedErr.code, 'limit_exceeded');
    assert.deepEqual(refusedErr.details, { limit: 'wallet_amount_day', headroom: '7' });
    assert.equal(otherErr.code, 'internal_error');
  });

  it('settles nothing with a frame that is not a reply, then settles with the reply', async () => {
    const c = client();
    let settled = false;
    const health = c.health().finally(() => (settled = true));
    await signer.received(1);
    const [h] = signer.requests;
    const id = h!.id;
    h!.answer({ v: 1, id, ok: true, result: HEALTH, extra: 1 });
    h!.answer({ v: 2, id, ok: true, result: HEALTH });
    h!.answer({ v: 1, id, ok: false, error: { code: 'not_a_code', message: 'm' } });
    h!.answer({ v: 1, id, ok: true });
    h!.answer({ v: 1, id: `${id}x`, ok: true, result: HEALTH });
    h!.answer({ v: 1, id: null, ok: false, error: { code: 'busy', message: 'm' } });
    h!.answer([id]);
    h!.answer('not a reply');
    // One more request, answered: the frames before it on the same connection were read and dropped.
    const later = c.health();
    await signer.received(2);
    const [, l] = signer.requests;
    l!.answer({ v: 1, id: l!.id, ok: true, result: HEALTH });
    assert.deepEqual(await later, HEALTH);
    assert.equal(settled, false);
    h!.answer({ v: 1, id, ok: true, result: HEALTH });
    assert.deepEqual(await health, HEALTH);
  });

  it('fails each unanswered request with hsm_unavailable once its timeout passed, not those answered', async () => {
    const c = client(50);
    const first = c.health();
    const second = c.health();
    const third = c.health();
    await signer.received(3);
    const [a, b] = signer.requests;
    b!.answer({ v: 1, id: b!.id, ok: true, result: HEALTH });
    assert.deepEqual(await second, HEALTH);
    const [e1, e3] = await Promise.all([rejection(first), rejection(third)]);
    for (const e of [e1, e3]) {
      assert.equal(e.code, 'hsm_unavailable');
      assert.match(e.message, /did not answer health within 50 ms/);
    }
    // A reply after its request failed settles nothing more.
    a!.answer({ v: 1, id: a!.id, ok: true, result: HEALTH });
  });

  it('fails the pending requests when the connection drops, and numbers requests uniquely across reconnects', async () => {
    const c = client();
    const pending = [c.health(), c.health()];
    await signer.received(2);
    signer.dropConnections();
    for (const p of pending) assert.equal((await rejection(p)).code, 'hsm_unavailable');
    const again = c.health();
    await signer.received(3);
    const r = signer.requests[2]!;
    r.answer({ v: 1, id: r.id, ok: true, result: HEALTH });
    assert.deepEqual(await again, HEALTH);
    const ids = signer.requests.map((q) => q.id);
    assert.equal(new Set(ids).size, ids.length, `ids repeat: ${ids.join(', ')}`);
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_\-.:]{1,64}$/);
  });
});
