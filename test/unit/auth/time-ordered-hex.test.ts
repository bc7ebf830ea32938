import assert from 'node:assert/strict';
import { timeOrderedHex } from '../../../src/api/auth/time-ordered-hex.js';
import { generateId } from '../../../src/api/auth/token-codec.js';
import { authorizationWindow } from '../../../src/api/pay/authorization-terms.js';
import { authorizationTermsSchema } from '../../../src/api/pay/pay-schemas.js';

describe('timeOrderedHex (identifiers and nonces that index at the right edge)', () => {
  it('starts with the millisecond time, so values sort by the time they were made', () => {
    const times = [0, 1, 15, 16, 255, 256, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000, 16 ** 12 - 1];
    const values = times.map((t) => timeOrderedHex(24, t));
    for (const [i, v] of values.entries()) {
      assert.match(v, /^[0-9a-f]{24}$/);
      assert.equal(parseInt(v.slice(0, 12), 16), times[i]);
    }
    assert.deepEqual([...values].sort(), values, 'string order is time order, across every change of digit count');
  });

  it('keeps values made in the same millisecond distinct (48 random bits in an identifier)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5_000; i++) seen.add(timeOrderedHex(24, 1_764_000_000_000));
    assert.equal(seen.size, 5_000);
  });

  it('identifiers and our EIP-3009 nonces made later sort later', async () => {
    const first = generateId('auth_');
    const { nonce: firstNonce } = authorizationWindow({ validForSeconds: 60 });
    await new Promise((r) => setTimeout(r, 3));
    const second = generateId('auth_');
    const { nonce: secondNonce } = authorizationWindow({ validForSeconds: 60 });
    assert.match(first, /^auth_[0-9a-f]{24}$/);
    assert.match(firstNonce, /^0x[0-9a-f]{64}$/);
    assert.ok(first < second, `${first} < ${second}`);
    assert.ok(firstNonce < secondNonce, `${firstNonce} < ${secondNonce}`);
    assert.ok(
      Math.abs(parseInt(secondNonce.slice(2, 14), 16) - Date.now()) < 5_000,
      'the nonce starts with the time it was made',
    );
  });

  it('a nonce the caller proposes is signed as given', () => {
    const nonce = `0x${'ab'.repeat(32)}`;
    assert.equal(
      authorizationWindow({ validForSeconds: 60, terms: authorizationTermsSchema.parse({ nonce }) }).nonce,
      nonce,
    );
  });

  it('refuses widths with no random part or an odd number of digits, and times it cannot write in 12 digits', () => {
    for (const digits of [0, 12, 13, 25, 1.5]) assert.throws(() => timeOrderedHex(digits), RangeError, String(digits));
    for (const now of [-1, 16 ** 12, Number.NaN, 1.5])
      assert.throws(() => timeOrderedHex(24, now), RangeError, String(now));
  });
});
