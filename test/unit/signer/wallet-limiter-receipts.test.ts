/**
 * Policy receipts' own ceilings in the signer's limiter (signer/limits/wallet-limiter.ts), pure, on an injected
 * clock: a receipt counts in the `wallet_receipts_*` ceilings only, a payment or permit never in them, so receipts
 * past the signature ceiling leave the wallet's payments their headroom; a receipt given back frees its own ceilings
 * only; the receipt windows are saved and read back under their names (signer/limits/limits-state-format.ts), and a
 * state file written before they existed still loads.
 */
import assert from 'node:assert/strict';
import { parseLimitsState, snapshotText } from '../../../signer/limits/limits-state-format.js';
import { WalletLimiter, type WalletLimit } from '../../../signer/limits/wallet-limiter.js';

const A = '0x857b06519e91e3a54538791bdbb0e22373e36b66';
const limits: WalletLimit[] = [
  { name: 'wallet_signatures_minute', measure: 'signatures', windowSeconds: 60, max: 2n },
  { name: 'wallet_amount_hour', measure: 'amount', windowSeconds: 3600, max: 1000n },
  { name: 'wallet_receipts_minute', measure: 'receipts', windowSeconds: 60, max: 3n },
  { name: 'wallet_receipts_hour', measure: 'receipts', windowSeconds: 3600, max: 5n },
];

function limiterAt(start = 1_800_000_000_000) {
  const clock = { now: start };
  return { clock, limiter: new WalletLimiter(limits, () => clock.now) };
}

const refusedBy = (outcome: ReturnType<WalletLimiter['take']>) => (outcome.ok ? undefined : outcome.refusal.limit);

describe('signer limits: policy receipts have ceilings of their own', () => {
  it('counts receipts in the receipt ceilings only: past the signature ceiling, payments keep theirs', () => {
    const { limiter } = limiterAt();
    for (let i = 0; i < 3; i++) assert.ok(limiter.take(A, 0n, 'receipt').ok, `receipt ${i + 1}`);
    assert.equal(refusedBy(limiter.take(A, 0n, 'receipt')), 'wallet_receipts_minute');
    assert.ok(limiter.take(A, 400n).ok, 'a payment after more receipts than the signature ceiling');
    assert.ok(limiter.take(A, 0n, 'signature').ok, 'a permit');
    assert.equal(refusedBy(limiter.take(A, 1n)), 'wallet_signatures_minute', 'payments count in their own');
    assert.deepEqual(Object.keys(limiter.held(A.toLowerCase()) ?? {}).sort(), [
      'wallet_amount_hour',
      'wallet_receipts_hour',
      'wallet_receipts_minute',
      'wallet_signatures_minute',
    ]);
    assert.deepEqual(
      limiter.held(A)?.wallet_receipts_minute?.map(([, v]) => v),
      ['3'],
    );
    assert.deepEqual(
      limiter.held(A)?.wallet_signatures_minute?.map(([, v]) => v),
      ['2'],
    );
  });

  it('refuses receipts past the hour ceiling after minutes apart, and a payment still passes', () => {
    const { clock, limiter } = limiterAt();
    for (let i = 0; i < 5; i++) {
      assert.ok(limiter.take(A, 0n, 'receipt').ok, `receipt ${i + 1}`);
      clock.now += 62_000;
    }
    assert.equal(refusedBy(limiter.take(A, 0n, 'receipt')), 'wallet_receipts_hour');
    assert.ok(limiter.take(A, 10n).ok);
  });

  it('a receipt given back frees its own ceilings and touches no other', () => {
    const { limiter } = limiterAt();
    assert.ok(limiter.take(A, 10n).ok);
    const taken = limiter.take(A, 0n, 'receipt');
    assert.ok(taken.ok);
    limiter.giveBack(taken.receipt);
    assert.equal(limiter.held(A)?.wallet_receipts_minute, undefined);
    assert.deepEqual(
      limiter.held(A)?.wallet_signatures_minute?.map(([, v]) => v),
      ['1'],
    );
    assert.deepEqual(
      limiter.held(A)?.wallet_amount_hour?.map(([, v]) => v),
      ['10'],
    );
  });

  it('saves the receipt windows under their names and reads them back; a file from before them loads', () => {
    const { clock, limiter } = limiterAt();
    for (let i = 0; i < 3; i++) limiter.take(A, 0n, 'receipt');
    limiter.take(A, 5n);
    const parsed = parseLimitsState(snapshotText(limiter.snapshot()));
    assert.ok(parsed.ok);
    const restarted = new WalletLimiter(limits, () => clock.now);
    restarted.restore(parsed.snapshot);
    assert.equal(refusedBy(restarted.take(A, 0n, 'receipt')), 'wallet_receipts_minute', 'the receipts survive');
    assert.ok(restarted.take(A, 5n).ok);

    const bucket = Math.floor(clock.now / 1000);
    const older = JSON.stringify({ v: 1, wallets: { [A]: { wallet_signatures_minute: [[bucket, '2']] } } });
    const read = parseLimitsState(older);
    assert.ok(read.ok, 'a state file without receipt windows still loads');
    const fromOlder = new WalletLimiter(limits, () => clock.now);
    fromOlder.restore(read.snapshot);
    assert.equal(refusedBy(fromOlder.take(A, 1n)), 'wallet_signatures_minute');
    assert.ok(fromOlder.take(A, 0n, 'receipt').ok, 'its receipts start empty');
  });
});
