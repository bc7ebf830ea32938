/**
 * The PKCS#11 sessions that cannot sign at once for lack of libuv threads (signer/config/hsm-threads.ts): named
 * when the sessions outnumber the threads, never for a backend without sessions.
 */
import assert from 'node:assert/strict';
import { hsmThreadShortfall } from '../../../signer/config/hsm-threads.js';

describe('hsmThreadShortfall', () => {
  it('names the sessions and the threads when the sessions outnumber the threads', () => {
    assert.deepEqual(hsmThreadShortfall(8, 4), { sessions: 8, threads: 4 });
    assert.deepEqual(hsmThreadShortfall(2, 1), { sessions: 2, threads: 1 });
  });

  it('says nothing when every session has a thread, or for a backend without sessions', () => {
    assert.equal(hsmThreadShortfall(4, 4), undefined);
    assert.equal(hsmThreadShortfall(1, 1024), undefined);
    assert.equal(hsmThreadShortfall(undefined, 1), undefined);
  });
});
