/** replay-guard: claim / release / settle, expiry, and the bound on remembered entries. */
import assert from 'node:assert/strict';
import { ReplayGuard } from '../../../src/x402/seller/replay-guard.js';

describe('x402 replay guard', () => {
  it('refuses a key while in flight, frees it on release, remembers it once settled', () => {
    let now = 1_000_000_000_000;
    const guard = new ReplayGuard(() => now);
    assert.equal(guard.claim('a'), true);
    assert.equal(guard.claim('a'), false);
    guard.release('a');
    assert.equal(guard.claim('a'), true);
    guard.settled('a', Math.floor(now / 1000) + 60); // bounded up to 10 minutes
    assert.equal(guard.claim('a'), false);
    now += 9 * 60_000;
    assert.equal(guard.claim('a'), false);
    now += 2 * 60_000;
    assert.equal(guard.claim('a'), true);
  });

  it('forgets the oldest settled entries beyond its bound, never in-flight ones', () => {
    const guard = new ReplayGuard(() => 0, 3);
    guard.claim('x');
    for (const k of ['a', 'b']) {
      guard.claim(k);
      guard.settled(k, undefined);
    }
    assert.equal(guard.claim('c'), true);
    assert.equal(guard.size, 3);
    assert.equal(guard.claim('x'), false);
  });
});
