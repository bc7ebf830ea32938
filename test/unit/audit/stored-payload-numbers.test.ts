/**
 * The numbers of a stored audit payload against the ones its hash covers (src/api/audit/stored-payload-numbers.ts):
 * jsonb's spelling of every double JavaScript writes is accepted, any other spelling of a number refused — one a
 * double cannot hold (1e400), more digits than the double keeps (2.0000000000000001), a trailing zero (2.0).
 * Digits inside strings and keys are not numbers. test/integration/db/audit-verify.test.ts holds the spelling
 * against PostgreSQL itself.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jsonbNumberText, storedNumbersHold } from '../../../src/api/audit/stored-payload-numbers.js';

describe('stored audit payload numbers', () => {
  it('spells a double as jsonb gives it back: plain decimal, no exponent', () => {
    const cases: Array<[number, string]> = [
      [0, '0'],
      [-0, '0'],
      [2, '2'],
      [-1.5, '-1.5'],
      [0.1 + 0.2, '0.30000000000000004'],
      [1e-6, '0.000001'],
      [1e-7, '0.0000001'],
      [-2.5e-7, '-0.00000025'],
      [123e-20, '0.00000000000000000123'],
      [5e-324, '0.' + '0'.repeat(323) + '5'],
      [1e20, '100000000000000000000'],
      [1e21, '1000000000000000000000'],
      [1.5e21, '1500000000000000000000'],
      [-1.2345e25, '-12345000000000000000000000'],
      [1.7976931348623157e308, '17976931348623157' + '0'.repeat(292)],
    ];
    for (const [n, text] of cases) assert.equal(jsonbNumberText(n), text, String(n));
  });

  it('holds a stored text whose numbers are the ones JavaScript reads from it', () => {
    for (const text of [
      '{}',
      '{"a": 1, "b": [2, -3.5, 0.0000001], "c": null, "d": true}',
      '{"n": 1000000000000000000000, "m": 17976931348623157' + '0'.repeat(292) + '}',
      '{"s": "1e400 2.0 -0 \\"9.10\\" \\\\", "2.0": "x", "k\\"1.0": [0]}',
      '[0.30000000000000004, -0.00000025]',
      '12',
      '"2.0"',
    ])
      assert.equal(storedNumbersHold(text), true, text);
  });

  it('refuses a number JavaScript reads as another one', () => {
    for (const text of [
      '{"reason": 1' + '0'.repeat(400) + '}',
      '{"n": 2.0000000000000001}',
      '{"n": 2.0}',
      '{"n": [1, 0.10]}',
      '{"n": -0}',
      '{"s": "\\\\", "n": 9007199254740993}',
      '{"n": 0.' + '0'.repeat(400) + '1}',
      // Not a jsonb's text at all.
      '{"s": "unterminated',
    ])
      assert.equal(storedNumbersHold(text), false, text.slice(0, 60));
  });

  it('holds every double, spelled as jsonb spells it, and the spelling reads back as the same double', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const text = jsonbNumberText(n);
        assert.equal(Number(text), n === 0 ? 0 : n);
        assert.equal(storedNumbersHold(`{"n": ${text}, "l": [${text}]}`), true, text);
      }),
      { numRuns: 2_000, seed: 11 },
    );
  });
});
