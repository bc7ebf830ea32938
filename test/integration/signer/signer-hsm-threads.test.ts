/**
 * treasury-signer on a SoftHSM token, started with more PKCS#11 sessions than libuv has threads to run their
 * C_Sign calls on: it says so once at start (a warning naming both numbers and the variable to raise) and still
 * serves; with UV_THREADPOOL_SIZE at least the sessions it says nothing, and its `signer ready` line carries the
 * threads it started with either way (signer/config/hsm-threads.ts).
 */
import assert from 'node:assert/strict';
import { startTestSigner } from '../../support/signer-harness.js';

interface LogLine {
  level: number;
  msg: string;
  sessions?: number;
  libuv_threads?: number;
}

const lines = (logs: string): LogLine[] =>
  logs
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);

const shortfallWarnings = (logs: string) => lines(logs).filter((l) => l.msg.includes('UV_THREADPOOL_SIZE='));

describe('signer: PKCS#11 sessions beyond libuv threads', function () {
  this.timeout(120_000);

  it('8 sessions on the default 4 threads: one warning at start naming both, and the signer serves', async () => {
    const signer = await startTestSigner({
      keyBackend: 'pkcs11',
      env: { TREASURY_PKCS11_SESSIONS: '8', UV_THREADPOOL_SIZE: '4' },
    });
    try {
      const warnings = shortfallWarnings(signer.logs());
      assert.equal(warnings.length, 1, signer.logs());
      assert.equal(warnings[0]!.level, 40);
      assert.equal(warnings[0]!.sessions, 8);
      assert.equal(warnings[0]!.libuv_threads, 4);
      assert.match(warnings[0]!.msg, /UV_THREADPOOL_SIZE=8 or more/);
      const ready = lines(signer.logs()).find((l) => l.msg === 'signer ready');
      assert.equal(ready?.sessions, 8);
      assert.equal(ready?.libuv_threads, 4);
      const account = (await signer.client.createAccountKey()).account_key_ref;
      assert.match((await signer.client.createWalletKey({ account_key_ref: account })).address, /^0x[0-9a-f]{40}$/i);
    } finally {
      await signer.stop();
    }
  });

  it('8 sessions on 8 threads: no warning; the ready line carries the threads', async () => {
    const signer = await startTestSigner({
      keyBackend: 'pkcs11',
      env: { TREASURY_PKCS11_SESSIONS: '8', UV_THREADPOOL_SIZE: '8' },
    });
    try {
      assert.deepEqual(shortfallWarnings(signer.logs()), []);
      const ready = lines(signer.logs()).find((l) => l.msg === 'signer ready');
      assert.equal(ready?.libuv_threads, 8);
    } finally {
      await signer.stop();
    }
  });
});
