/**
 * The PKCS#11 session pool (signer/backends/pkcs11/session-pool.ts) on a fake module whose token can be
 * made to refuse new sessions: a session whose operation failed is replaced; when the replacement cannot
 * be opened and no session is left, the requests waiting for one are answered `hsm_unavailable` at once
 * (never left waiting for a request that may not come); once the token is back, a new request gets a session.
 */
import assert from 'node:assert/strict';
import type pkcs11js from 'pkcs11js';
import type { Pkcs11Module } from '../../../signer/backends/pkcs11/pkcs11-module.js';
import { SessionPool } from '../../../signer/backends/pkcs11/session-pool.js';
import { SignerFault } from '../../../signer/signer-error.js';

const isFault = (code: string) => (e: unknown) => e instanceof SignerFault && e.code === code;

/** The two calls the pool makes, on a token that refuses sessions while `down`. */
function fakeModule() {
  const fake = {
    down: false,
    next: 1,
    open: new Set<number>(),
    openSession(): pkcs11js.Handle {
      if (fake.down) throw Object.assign(new Error('CKR_DEVICE_REMOVED'), { code: 0x32 });
      const handle = fake.next++;
      fake.open.add(handle);
      return Buffer.from([handle]);
    },
    closeSession(session: pkcs11js.Handle): void {
      fake.open.delete(session[0]!);
    },
  };
  return fake;
}

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Settles with 'waiting' if `p` has not settled after a few turns of the event loop. */
async function settledSoon(p: Promise<unknown>): Promise<string> {
  const outcome = p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof SignerFault ? e.code : 'rejected'),
  );
  const waiting = new Promise<string>((resolve) => setTimeout(() => resolve('waiting'), 50));
  return Promise.race([outcome, waiting]);
}

describe('PKCS#11 session pool', () => {
  it('replaces a session whose operation failed, and hands it to the next waiter', async () => {
    const token = fakeModule();
    const pool = new SessionPool(token as unknown as Pkcs11Module, Buffer.alloc(0), 1);
    const first = deferred();
    const failing = pool.with(() => first.promise);
    const queued = pool.with(async (session) => session[0]);
    first.reject(new Error('C_Sign failed'));
    await assert.rejects(failing, /C_Sign failed/);
    assert.equal(await queued, 2, 'the replacement session');
    assert.deepEqual([...token.open], [2]);
    pool.close();
  });

  it('when no replacement can be opened and no session is left, every waiter is answered hsm_unavailable at once', async () => {
    const token = fakeModule();
    const pool = new SessionPool(token as unknown as Pkcs11Module, Buffer.alloc(0), 1);
    const first = deferred();
    const failing = pool.with(() => first.promise);
    const waiters = Array.from({ length: 3 }, () => pool.with(async () => 'signed'));
    token.down = true;
    first.reject(new Error('C_Sign failed'));
    await assert.rejects(failing, /C_Sign failed/);
    assert.deepEqual(await Promise.all(waiters.map(settledSoon)), [
      'hsm_unavailable',
      'hsm_unavailable',
      'hsm_unavailable',
    ]);
    assert.equal(pool.openSessions, 0);
    // While the token is away a new request is refused at once; once it is back, one gets a session.
    await assert.rejects(
      pool.with(async () => 'signed'),
      isFault('hsm_unavailable'),
    );
    token.down = false;
    assert.equal(await pool.with(async () => 'signed'), 'signed');
    assert.equal(pool.openSessions, 1);
    pool.close();
  });

  it('with sessions left, waiters keep waiting for them rather than fail', async () => {
    const token = fakeModule();
    const pool = new SessionPool(token as unknown as Pkcs11Module, Buffer.alloc(0), 2);
    const failingOp = deferred();
    const slowOp = deferred();
    const failing = pool.with(() => failingOp.promise);
    const slow = pool.with(() => slowOp.promise);
    const queued = pool.with(async () => 'signed');
    token.down = true;
    failingOp.reject(new Error('C_Sign failed'));
    await assert.rejects(failing, /C_Sign failed/);
    assert.equal(await settledSoon(queued), 'waiting', 'one session is still open: it will come back');
    slowOp.resolve();
    await slow;
    assert.equal(await queued, 'signed');
    assert.equal(pool.openSessions, 1);
    pool.close();
  });
});
