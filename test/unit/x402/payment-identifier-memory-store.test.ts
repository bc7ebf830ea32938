/**
 * The in-memory `payment-identifier` store (src/x402/seller/payment-identifier-memory-store.ts): claims,
 * conflicts and replays; its bounds — retention, entries, bytes — and that pending claims are never evicted
 * (only expire).
 */
import assert from 'node:assert/strict';
import { MemoryPaymentIdentifierStore } from '../../../src/x402/seller/payment-identifier-memory-store.js';
import type { StoredAnswer } from '../../../src/x402/seller/payment-identifier-store.js';

const FP = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
const key = (id: string) => ({ scope: 's', route: '/r', id: `pay_${id.padStart(16, '0')}` });
const answer = (bytes = 4): StoredAnswer => ({
  status: 200,
  headers: { 'content-type': 'text/plain' },
  body_base64: Buffer.alloc(bytes, 1).toString('base64'),
});

function store(options: Partial<ConstructorParameters<typeof MemoryPaymentIdentifierStore>[0]> = {}) {
  let now = 1_000_000;
  const s = new MemoryPaymentIdentifierStore({
    retentionSeconds: 60,
    maxEntries: 3,
    maxTotalBytes: 1 << 20,
    clock: () => now,
    ...options,
  });
  return { s, advance: (ms: number) => (now += ms) };
}

describe('payment-identifier memory store', () => {
  it('new → in flight → stored for the same fingerprint; conflict for another; release frees the id', async () => {
    const { s } = store();
    assert.deepEqual(await s.begin(key('1'), FP, 60), { kind: 'new' });
    assert.deepEqual(await s.begin(key('1'), FP, 60), { kind: 'in_flight' });
    assert.deepEqual(await s.begin(key('1'), OTHER, 60), { kind: 'conflict' });
    await s.complete(key('1'), FP, answer());
    assert.deepEqual(await s.begin(key('1'), FP, 60), { kind: 'stored', answer: answer() });
    assert.deepEqual(await s.begin(key('1'), OTHER, 60), { kind: 'conflict' });
    assert.deepEqual(await s.begin({ ...key('1'), scope: 't' }, OTHER, 60), { kind: 'new' }, 'scoped by seller');
    assert.deepEqual(await s.begin({ ...key('1'), route: '/x' }, OTHER, 60), { kind: 'new' }, 'and by route');
    assert.deepEqual(await s.begin(key('2'), FP, 60), { kind: 'new' });
    await s.release(key('2'), OTHER);
    assert.deepEqual(await s.begin(key('2'), FP, 60), { kind: 'in_flight' }, 'another fingerprint cannot release it');
    await s.release(key('2'), FP);
    assert.deepEqual(await s.begin(key('2'), OTHER, 60), { kind: 'new' });
  });

  it('answers expire after the retention window, pending claims after their TTL', async () => {
    const { s, advance } = store();
    await s.begin(key('1'), FP, 10);
    await s.complete(key('1'), FP, answer());
    await s.begin(key('2'), FP, 10);
    advance(11_000);
    assert.deepEqual(await s.begin(key('2'), OTHER, 10), { kind: 'new' }, 'a crashed claim frees itself');
    assert.equal((await s.begin(key('1'), FP, 10)).kind, 'stored');
    advance(50_000);
    assert.deepEqual(await s.begin(key('1'), OTHER, 10), { kind: 'new' }, 'retention over');
  });

  it('keeps at most maxEntries, forgetting the least recently used answers, never a pending claim', async () => {
    const { s } = store({ maxEntries: 3 });
    for (const id of ['1', '2']) {
      await s.begin(key(id), FP, 60);
      await s.complete(key(id), FP, answer());
    }
    await s.begin(key('p'), FP, 60); // pending
    assert.equal((await s.begin(key('1'), FP, 60)).kind, 'stored'); // 1 used: 2 is now the oldest
    await s.begin(key('3'), FP, 60);
    assert.equal(s.size, 3);
    assert.deepEqual(await s.begin(key('2'), OTHER, 60), { kind: 'new' }, '2 was forgotten');
    assert.equal((await s.begin(key('p'), FP, 60)).kind, 'in_flight', 'the pending claim stayed');
  });

  it('keeps at most maxTotalBytes of answers', async () => {
    const { s } = store({ maxEntries: 100, maxTotalBytes: 2048 });
    for (const id of ['1', '2', '3']) {
      await s.begin(key(id), FP, 60);
      await s.complete(key(id), FP, answer(900));
      assert.ok(s.storedBytes <= 2048, `${s.storedBytes}`);
    }
    assert.deepEqual(await s.begin(key('1'), OTHER, 60), { kind: 'new' }, 'the oldest answer made room');
    assert.equal((await s.begin(key('3'), FP, 60)).kind, 'stored');
  });

  it('full of crashed claims, frees the expired ones for a new claim', async () => {
    const { s, advance } = store({ maxEntries: 3 });
    for (const id of ['1', '2', '3']) await s.begin(key(id), FP, 10);
    assert.deepEqual(await s.begin(key('4'), FP, 10), { kind: 'new' }); // none expired: kept, over the bound
    advance(11_000);
    assert.deepEqual(await s.begin(key('5'), FP, 10), { kind: 'new' });
    assert.equal(s.size, 1);
  });

  it('replays the answers it keeps after many more were forgotten, at most maxEntries at any time', async () => {
    const { s } = store({ maxEntries: 50 });
    for (let i = 0; i < 2000; i++) {
      assert.deepEqual(await s.begin(key(`${i}`), FP, 60), { kind: 'new' });
      await s.complete(key(`${i}`), FP, answer());
      assert.ok(s.size <= 50, `size ${s.size}`);
    }
    assert.equal((await s.begin(key('1999'), FP, 60)).kind, 'stored');
    assert.equal((await s.begin(key('1950'), FP, 60)).kind, 'stored');
    assert.deepEqual(await s.begin(key('1949'), FP, 60), { kind: 'new' });
  });
});
