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

  it('when full, forgets its oldest settled payments together and keeps refusing the newer ones', () => {
    const guard = new ReplayGuard(() => 0, 80); // generations of 10
    for (let i = 0; i < 80; i++) {
      assert.equal(guard.claim(`k${i}`), true);
      guard.settled(`k${i}`, undefined);
    }
    assert.equal(guard.size, 80);
    assert.equal(guard.claim('fresh'), true);
    assert.equal(guard.size, 71); // k0…k9 forgotten at once, 'fresh' in flight
    assert.equal(guard.claim('k9'), true);
    for (const kept of ['k10', 'k45', 'k79']) assert.equal(guard.claim(kept), false);
  });

  it('drops a generation once every payment in it has expired, and refuses each payment until its own expiry', () => {
    let now = 1_000_000_000_000;
    const guard = new ReplayGuard(() => now, 80);
    guard.claim('short');
    guard.settled('short', Math.floor(now / 1000) + 600);
    guard.claim('long');
    guard.settled('long', Math.floor(now / 1000) + 3600);
    now += 11 * 60_000;
    assert.equal(guard.claim('short'), true); // expired, though its generation is kept for 'long'
    assert.equal(guard.claim('long'), false);
    guard.settled('short', Math.floor(now / 1000) + 600); // settled again: refused until its new expiry
    assert.equal(guard.claim('short'), false);
    now += 61 * 60_000;
    assert.equal(guard.claim('long'), true);
    assert.equal(guard.claim('short'), true);
    assert.equal(guard.size, 2); // both generations dropped, the two claims in flight
  });

  it('at most maxEntries payments, however many settle; in-flight claims are never forgotten', () => {
    const guard = new ReplayGuard(() => 0, 16);
    for (let i = 0; i < 8; i++) guard.claim(`held${i}`);
    for (let i = 0; i < 1000; i++) {
      assert.equal(guard.claim(`p${i}`), true);
      guard.settled(`p${i}`, undefined);
      assert.ok(guard.size <= 16, `size ${guard.size} after ${i + 1} settlements`);
    }
    for (let i = 0; i < 8; i++) assert.equal(guard.claim(`held${i}`), false);
    assert.equal(guard.claim('p999'), false);
  });
});
