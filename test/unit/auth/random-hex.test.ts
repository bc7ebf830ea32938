import assert from 'node:assert/strict';
import { randomHex } from '../../../src/api/auth/random-hex.js';
import { generateId } from '../../../src/api/auth/token-codec.js';

describe('randomHex (pooled CSPRNG output for identifiers and nonces)', () => {
  it('never repeats a value across many refills of its 4 KiB buffer', () => {
    // 32-byte nonces: 128 per buffer, so 20,000 of them span ≈ 156 refills; a buffer not refilled, or
    // refilled with the same bytes, would repeat values.
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const nonce = randomHex(32);
      assert.match(nonce, /^[0-9a-f]{64}$/);
      seen.add(nonce);
    }
    assert.equal(seen.size, 20_000);
  });

  it('hands out sizes that do not divide the buffer without overlap (a value straddling the end starts a new buffer)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      const id = generateId('pd_');
      assert.match(id, /^pd_[0-9a-f]{24}$/);
      seen.add(id);
      const odd = randomHex(7);
      assert.match(odd, /^[0-9a-f]{14}$/);
    }
    assert.equal(seen.size, 5_000);
  });

  it('gives uniformly distributed hex digits', () => {
    const counts = new Array<number>(16).fill(0);
    const values = 4_000;
    for (let i = 0; i < values; i++) for (const c of randomHex(32)) counts[parseInt(c, 16)]!++;
    const expected = (values * 64) / 16;
    const chiSquare = counts.reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    // 15 degrees of freedom: P(χ² > 45) ≈ 7e-5 for a uniform source.
    assert.ok(chiSquare < 45, `χ² = ${chiSquare.toFixed(1)} over ${JSON.stringify(counts)}`);
  });

  it('refuses sizes outside 1–256 bytes', () => {
    for (const bad of [0, -1, 1.5, 257, Number.NaN]) assert.throws(() => randomHex(bad), RangeError);
  });
});
