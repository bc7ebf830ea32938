/**
 * When a submitted payout may be judged expired (src/api/sellers/payouts/payout-expiry.ts): only once this
 * host's clock is past `validBefore` plus the grace, never at `validBefore` itself.
 */
import assert from 'node:assert/strict';
import { isPayoutExpired, PAYOUT_EXPIRY_GRACE_SECONDS } from '../../../src/api/sellers/payouts/payout-expiry.js';

describe('isPayoutExpired', () => {
  const validBefore = 1_900_000_000;
  const at = (seconds: number) => new Date(seconds * 1000);

  it('waits at least a minute past validBefore (clock skew between this host and the chain)', () => {
    assert.ok(PAYOUT_EXPIRY_GRACE_SECONDS >= 60);
  });

  it('is false before validBefore, at it, half a second past it and at the end of the grace', () => {
    for (const now of [
      at(validBefore - 2),
      at(validBefore),
      new Date(validBefore * 1000 + 500),
      at(validBefore + PAYOUT_EXPIRY_GRACE_SECONDS),
    ])
      assert.equal(isPayoutExpired(String(validBefore), now), false, now.toISOString());
  });

  it('is true once the grace has passed, for a decimal string or a bigint', () => {
    const after = new Date((validBefore + PAYOUT_EXPIRY_GRACE_SECONDS) * 1000 + 1);
    assert.equal(isPayoutExpired(String(validBefore), after), true);
    assert.equal(isPayoutExpired(BigInt(validBefore), after), true);
  });
});
