/**
 * money.ts: exact parsing and formatting, the hostile USD and raw-amount tables, the bounds, and seeded
 * round-trip properties (format → parse is the identity on bigints; parse → format is canonical).
 */
import assert from 'node:assert/strict';
import {
  MAX_USD_MICRO,
  RAW_AMOUNT_LIMIT,
  canonicalUsd,
  formatUsd,
  isRawAmount,
  isUsdString,
  parseRawAmount,
  parseUsd,
} from '../../../policy/money.js';
import { hostile, seeded } from './policy-fixtures.js';

describe('money: USD strings ⇄ micro-USD', () => {
  it('parses exactly, with 1 to 6 decimals', () => {
    const spellings = ['0', '12.5', '12.50', '0.000001', '0.1', '999999.999999'];
    assert.deepEqual(spellings.map(parseUsd), [0n, 12_500_000n, 12_500_000n, 1n, 100_000n, 999_999_999_999n]);
  });

  it('formats the shortest canonical spelling', () => {
    assert.equal(formatUsd(1_500_000n), '1.5');
    assert.equal(formatUsd(1n), '0.000001');
    assert.equal(formatUsd(10_000_000n), '10');
    assert.equal(formatUsd(0n), '0');
    assert.equal(formatUsd(-10n), '-0.00001');
    assert.equal(canonicalUsd('1.500000'), '1.5');
    assert.equal(canonicalUsd('0.000000'), '0');
    assert.throws(() => formatUsd(1.5 as unknown as bigint), TypeError);
  });

  it('accepts 2^63 − 1 micro-USD (the largest bigint) and refuses one micro-USD more', () => {
    assert.equal(parseUsd('9223372036854.775807'), MAX_USD_MICRO);
    assert.equal(MAX_USD_MICRO, 2n ** 63n - 1n);
    assert.equal(isUsdString('9223372036854.775808'), false);
    assert.equal(isUsdString('1000000000000000'), false);
    assert.equal(isUsdString('9999999999999999'), false);
    assert.equal(isUsdString('10000000000000000'), false);
  });

  it('refuses every hostile USD spelling of the shared table ("0" aside: a valid amount that caps refuse)', () => {
    for (const value of hostile.usd_amount!) {
      if (value === '0') continue;
      assert.equal(isUsdString(value), false, JSON.stringify(value));
      assert.throws(() => parseUsd(value as string), RangeError, JSON.stringify(value));
    }
  });

  it('refuses the generic hostile values and other ambiguous spellings', () => {
    const more = [
      '-0',
      '+1',
      '1.',
      '.1',
      '01',
      '1.1234567',
      ' 1',
      '1 ',
      '1\n',
      '\n1',
      '1_000',
      '0b1',
      '1.2.3',
      '١',
      'Infinity',
      '1e-7',
      1n,
      new String('1'),
    ];
    for (const value of [...hostile.any!, ...more]) {
      assert.equal(isUsdString(value), false, String(value));
      assert.throws(() => parseUsd(value as string), RangeError, String(value));
    }
  });

  it('property: formatUsd then parseUsd is the identity for 2,000 seeded amounts up to 10^15 USD', () => {
    const rng = seeded(402n);
    for (let i = 0; i < 2_000; i++) {
      // Mix magnitudes: whole range, small amounts, and exact cents.
      const micro =
        i % 3 === 0
          ? rng.below(MAX_USD_MICRO + 1n)
          : i % 3 === 1
            ? rng.below(10n ** 9n)
            : rng.below(10n ** 8n) * 10_000n;
      const text = formatUsd(micro);
      assert.equal(parseUsd(text), micro, text);
      assert.equal(canonicalUsd(text), text);
    }
  });

  it('property: any accepted spelling (trailing zeros) parses to the value of its canonical form', () => {
    const rng = seeded(7n);
    for (let i = 0; i < 1_000; i++) {
      const whole = rng.below(10n ** BigInt(1 + rng.int(12)));
      const digits = 1 + rng.int(6);
      const fraction = rng
        .below(10n ** BigInt(digits))
        .toString()
        .padStart(digits, '0');
      const text = `${whole}.${fraction}`;
      assert.equal(parseUsd(canonicalUsd(text)), parseUsd(text), text);
      assert.ok(!/\.\d*0$/.test(canonicalUsd(text)), canonicalUsd(text));
    }
  });
});

describe('money: raw token amounts', () => {
  it('parses base-10 integers below 2^256', () => {
    assert.equal(parseRawAmount('0'), 0n);
    assert.equal(parseRawAmount('10000'), 10_000n);
    assert.equal(parseRawAmount((RAW_AMOUNT_LIMIT - 1n).toString()), RAW_AMOUNT_LIMIT - 1n);
    assert.equal(isRawAmount(RAW_AMOUNT_LIMIT.toString()), false);
    assert.equal(isRawAmount('9'.repeat(79)), false);
  });

  it('refuses every hostile raw amount of the shared table and the generic hostile values', () => {
    for (const value of [...hostile.raw_token_amount!, ...hostile.any!]) {
      assert.equal(isRawAmount(value), false, String(value));
      assert.throws(() => parseRawAmount(value as string), RangeError, String(value));
    }
  });

  it('property: toString then parseRawAmount is the identity for seeded uint256 values', () => {
    const rng = seeded(256n);
    for (let i = 0; i < 500; i++) {
      const value = rng.below(RAW_AMOUNT_LIMIT >> BigInt(rng.int(256)));
      assert.equal(parseRawAmount(value.toString()), value);
    }
  });
});
