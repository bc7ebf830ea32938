/**
 * The pay path's memory of Idempotency-Keys seen (src/api/pay/snapshot-cache.ts `firstUseOfKey`): a key is new
 * once per wallet and seen after that, the same key on another wallet is new, pairs whose wallet id and key join
 * to the same text stay apart, the memory forgets the least recently seen key past its bound, and what it holds
 * for a key is its 44-character digest, whatever the key's length.
 */
import assert from 'node:assert/strict';
import { MAX_SEEN_KEYS, SnapshotCache, seenKeyId } from '../../../src/api/pay/snapshot-cache.js';

describe('pay: the memory of Idempotency-Keys seen', () => {
  it('a key is new once per wallet, then seen; on another wallet it is new', () => {
    const cache = new SnapshotCache();
    assert.equal(cache.firstUseOfKey('wal_a', 'key-1'), true);
    assert.equal(cache.firstUseOfKey('wal_a', 'key-1'), false);
    assert.equal(cache.firstUseOfKey('wal_a', 'key-1'), false);
    assert.equal(cache.firstUseOfKey('wal_b', 'key-1'), true);
    assert.equal(cache.firstUseOfKey('wal_a', 'key-2'), true);
  });

  it('keeps apart pairs whose wallet id and key join to the same text', () => {
    const cache = new SnapshotCache();
    assert.equal(cache.firstUseOfKey('wal_a|x', 'y'), true);
    assert.equal(cache.firstUseOfKey('wal_a', 'x|y'), true);
    assert.equal(cache.firstUseOfKey('wal_ab', 'c'), true);
    assert.equal(cache.firstUseOfKey('wal_a', 'bc'), true);
    assert.notEqual(seenKeyId('wal_a|x', 'y'), seenKeyId('wal_a', 'x|y'));
  });

  it(`forgets the least recently seen key once it holds ${MAX_SEEN_KEYS.toLocaleString('en')}`, () => {
    const cache = new SnapshotCache();
    for (let i = 0; i <= MAX_SEEN_KEYS; i++) assert.equal(cache.firstUseOfKey('wal_a', `k${i}`), true);
    assert.equal(cache.firstUseOfKey('wal_a', `k${MAX_SEEN_KEYS}`), false, 'the newest is still held');
    assert.equal(cache.firstUseOfKey('wal_a', 'k0'), true, 'the oldest was forgotten');
  });

  it('holds a 44-character digest for any key, the longest the schema allows included', () => {
    for (const key of ['k', 'a'.repeat(128)]) {
      const id = seenKeyId('wal_0123456789abcdef0123456789abcdef', key);
      assert.equal(id.length, 44);
      assert.ok(!id.includes(key));
    }
  });
});
