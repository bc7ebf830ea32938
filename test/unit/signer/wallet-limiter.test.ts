/**
 * The signer's rolling ceilings per wallet, pure, on an injected clock: the max-th signature passes and
 * the next is refused with the limit, its headroom and when to retry; an entry counts for the whole window
 * (never less, at most one bucket of 1/60 more) and then leaves; wallets are apart, 0x addresses case-blind and
 * base58 ones exact (lower-casing base58 names another key);
 * a refused request records nothing; a signature given back frees its headroom; idle wallets are forgotten.
 */
import assert from 'node:assert/strict';
import { BUCKETS, RollingSum } from '../../../signer/limits/rolling-sum.js';
import { WalletLimiter, type WalletLimit } from '../../../signer/limits/wallet-limiter.js';

const A = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
const B = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const limits: WalletLimit[] = [
  { name: 'wallet_signatures_minute', measure: 'signatures', windowSeconds: 60, max: 3n },
  { name: 'wallet_amount_hour', measure: 'amount', windowSeconds: 3600, max: 1000n },
];

function limiterAt(start = 1_800_000_000_000) {
  const clock = { now: start };
  return { clock, limiter: new WalletLimiter(limits, () => clock.now) };
}

describe('rolling sum', () => {
  it('counts an entry for at least the window and at most one bucket more', () => {
    const sum = new RollingSum(60_000);
    for (const at of [0, 999, 500]) {
      const s = new RollingSum(60_000);
      const t = 1_000_000 * 1000 + at;
      s.add(t, 5n);
      assert.equal(s.total(t + 59_999), 5n, 'still counted just before the window ends');
      assert.equal(s.total(t + 60_000 + 1000), 0n, 'gone one bucket after the window');
    }
    assert.equal(sum.total(0), 0n);
    assert.throws(() => new RollingSum(61_001), RangeError);
    assert.equal(BUCKETS, 60);
  });

  it('keeps its running total equal to the sum of what it holds, through random adds, removals and time', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const s = new RollingSum(60_000);
    const added: Array<[number, bigint]> = [];
    let now = 5_000_000;
    for (let i = 0; i < 20_000; i++) {
      now += Math.floor(random() * 700) - (random() < 0.01 ? 3000 : 0) - (random() < 0.001 ? 200_000 : 0); // mostly forward, sometimes a step back
      const r = random();
      if (r < 0.5) added.push([s.add(now, BigInt(1 + Math.floor(random() * 1000))), 0n]);
      else if (r < 0.6 && added.length > 0) {
        const [bucket] = added[Math.floor(random() * added.length)]!;
        s.remove(bucket, BigInt(Math.floor(random() * 500)));
      }
      const held = s.entries(now).reduce((sum, [, v]) => sum + v, 0n);
      assert.equal(s.total(now), held, `step ${i}`);
    }
  });

  it('tells when enough has left: the oldest buckets first', () => {
    const s = new RollingSum(60_000);
    s.add(10_000, 2n);
    s.add(30_000, 3n);
    assert.equal(s.msUntilFreed(40_000, 0n), 0);
    // The bucket of 10 s leaves at (10 + 61) s, the one of 30 s at (30 + 61) s.
    assert.equal(s.msUntilFreed(40_000, 1n), 71_000 - 40_000);
    assert.equal(s.msUntilFreed(40_000, 3n), 91_000 - 40_000);
    assert.equal(s.total(71_000), 3n);
  });

  it('saturates at 2^63 − 1 instead of wrapping, so a ceiling below it still refuses', () => {
    const max = 2n ** 63n - 1n;
    const s = new RollingSum(60_000);
    const now = 1_000_000;
    s.restore(now, [[1000, 9_000_000_000_000_000_000n]]);
    s.restore(now, [
      [1000, 9_000_000_000_000_000_000n],
      [999, 5n],
    ]);
    assert.equal(s.total(now), max);
    s.add(now, 10n ** 18n);
    assert.equal(s.total(now), max, 'an add above the top stays at the top');
    assert.deepEqual(s.entries(now), [
      [999, 5n],
      [1000, max],
    ]);
    const limiter = new WalletLimiter(limits, () => now);
    limiter.restore({ v: 1, wallets: { [A.toLowerCase()]: { wallet_amount_hour: [[16, '9999999999999999999']] } } });
    const refused = limiter.take(A, 1n);
    assert.equal(refused.ok, false, 'a saturated window is over every ceiling');
  });

  it('counts a saturated total again from what is still held when a bucket leaves or is taken back', () => {
    const s = new RollingSum(60_000);
    const big = 9_000_000_000_000_000_000n;
    s.restore(1_000_000, [
      [1000, big],
      [1010, big],
      [1011, 7n],
    ]);
    assert.equal(s.total(1_000_000), 2n ** 63n - 1n);
    // Bucket 1000 leaves at (1000 + 61) s: what is left is the other two, not the top minus what left.
    assert.equal(s.total(1_061_000), big + 7n);
    s.restore(1_061_000, [[1011, big]]);
    s.remove(1011, 5n);
    assert.equal(s.total(1_061_000), 2n ** 63n - 1n, 'still saturated: 9e18 + 9e18 + 2');
    s.remove(1010, big);
    assert.equal(s.total(1_061_000), big + 2n, 'taken back from a saturated total: counted from the buckets');
  });

  it("keeps every bucket a restore brings, past a window's usual 61, and its total their sum", () => {
    const s = new RollingSum(60_000);
    const now = 100 * 1000;
    for (let second = 40; second <= 100; second++) s.add(second * 1000, BigInt(second));
    // Buckets of a clock that ran ahead (a file written on it): still counted until they leave.
    const ahead = Array.from({ length: 61 }, (_, i) => [200 + i, 1n] as const);
    s.restore(now, ahead);
    const held = s.entries(now);
    assert.equal(held.length, 122);
    assert.equal(
      s.total(now),
      held.reduce((sum, [, v]) => sum + v, 0n),
    );
    assert.equal(s.total(now), 61n + BigInt(((40 + 100) * 61) / 2));
  });
});

describe('wallet limiter', () => {
  it('lets the max-th signature through and refuses the next with the limit, headroom and retry-after', () => {
    const { clock, limiter } = limiterAt();
    for (let i = 0; i < 3; i++) {
      assert.equal(limiter.take(A, 10n).ok, true);
      clock.now += 1000;
    }
    const refused = limiter.take(A, 10n);
    assert.equal(refused.ok, false);
    if (refused.ok) return;
    assert.equal(refused.refusal.limit, 'wallet_signatures_minute');
    assert.equal(refused.refusal.max, 3n);
    assert.equal(refused.refusal.headroom, 0n);
    assert.equal(refused.refusal.windowSeconds, 60);
    // The first signature, 3 s ago, leaves 58 to 59 s from now.
    assert.ok(
      refused.refusal.retryAfterSeconds >= 58 && refused.refusal.retryAfterSeconds <= 59,
      String(refused.refusal.retryAfterSeconds),
    );
    clock.now += refused.refusal.retryAfterSeconds * 1000;
    assert.equal(limiter.take(A, 10n).ok, true, 'fits again once the retry-after has passed');
  });

  it('keeps wallets apart, addresses case-blind, and records nothing for a refused request', () => {
    const { limiter } = limiterAt();
    assert.equal(limiter.take(A, 900n).ok, true);
    const over = limiter.take(A.toLowerCase(), 101n);
    assert.equal(over.ok, false);
    if (!over.ok) assert.deepEqual([over.refusal.limit, over.refusal.headroom], ['wallet_amount_hour', 100n]);
    assert.equal(limiter.take(A.toUpperCase().replace('0X', '0x'), 100n).ok, true, 'the refused 101 took nothing');
    assert.equal(limiter.take(A, 1n).ok, false);
    assert.equal(limiter.take(B, 1000n).ok, true, 'another wallet has its own ceilings');
  });

  it('keys a base58 (Solana) address exactly: one differing only in case is another wallet', () => {
    const { limiter } = limiterAt();
    const solana = '2wmVCSfPxGPjrnMMn7rchp4uaeoTqN39mXFC2zhPdri9';
    assert.equal(limiter.take(solana, 1000n).ok, true);
    assert.equal(limiter.take(solana, 1n).ok, false, 'the same spelling shares its ceilings');
    assert.equal(limiter.take(solana.toLowerCase(), 1000n).ok, true, 'another spelling is another wallet');
    assert.deepEqual(Object.keys(limiter.snapshot().wallets).sort(), [solana, solana.toLowerCase()].sort());
  });

  it('refuses a first signature above a ceiling on its own', () => {
    const { limiter } = limiterAt();
    const r = limiter.take(A, 1001n);
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.refusal.limit, 'wallet_amount_hour');
  });

  it('gives back a signature that never left', () => {
    const { limiter } = limiterAt();
    const first = limiter.take(A, 1000n);
    assert.equal(limiter.take(A, 1n).ok, false);
    assert.ok(first.ok);
    if (first.ok) limiter.giveBack(first.receipt);
    assert.equal(limiter.take(A, 1000n).ok, true);
  });

  it('snapshots and restores what each wallet has counted; what left its window is dropped', () => {
    const { clock, limiter } = limiterAt();
    limiter.take(A, 600n);
    clock.now += 30_000;
    limiter.take(A, 300n);
    limiter.take(B, 5n);
    const snapshot = JSON.parse(JSON.stringify(limiter.snapshot()));
    assert.deepEqual(Object.keys(snapshot.wallets).sort(), [A.toLowerCase(), B.toLowerCase()].sort());
    const again = new WalletLimiter(limits, () => clock.now);
    again.restore(snapshot);
    const c0 = again.changes;
    const refused = again.take(A, 101n);
    assert.equal(refused.ok, false, '900 of the hourly 1000 are still counted after the restore');
    assert.equal(again.changes, c0, 'a refusal records nothing');
    // 40 minutes on: the minute window is empty, the hour still holds 900.
    clock.now += 40 * 60_000;
    const later = new WalletLimiter(limits, () => clock.now);
    later.restore(snapshot);
    for (let i = 0; i < 3; i++)
      assert.equal(later.take(B, 1n).ok, true, 'the minute window of the snapshot has expired');
    assert.equal(later.take(A, 100n).ok, true);
    assert.equal(later.take(A, 1n).ok, false);
    // Two hours on, nothing is left to restore.
    clock.now += 2 * 3600_000;
    const empty = new WalletLimiter(limits, () => clock.now);
    empty.restore(snapshot);
    assert.equal(empty.size, 0);
  });

  it('forgets wallets with nothing left in any window', () => {
    const { clock, limiter } = limiterAt();
    for (let i = 0; i < 4095; i++) limiter.take(`0x${i.toString(16).padStart(40, '0')}`, 1n);
    assert.equal(limiter.size, 4095);
    clock.now += 3700 * 1000;
    limiter.take(A, 1n); // the 4,096th take sweeps
    assert.equal(limiter.size, 1);
  });
});
