/**
 * Canonical JSON (base/canonical-json.ts) drops and changes nothing: a `__proto__` key is written as any other
 * key, at any depth; NaN and ±Infinity are refused with a CanonicalJsonError naming where they lie, not written
 * as null. Every other value is spelled as before (the earlier function is copied here): over the hostile-input
 * table and random JSON values, so the audit rows and owner-signed policies hashed before hash the same.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson, CanonicalJsonError } from '../../../base/canonical-json.js';
import { earlierCanonicalJson } from '../../support/earlier-canonical-json.js';
import { holdsProtoKey, hostileJsonValues } from '../../support/hostile-json-values.js';

const hostileValues = hostileJsonValues;

describe('canonicalJson', () => {
  it('writes a __proto__ key as any other key, at any depth, in its sorted place', () => {
    const cases: Array<[text: string, canonical: string]> = [
      ['{"b":1,"__proto__":{"to":"0xEVIL"},"a":2}', '{"__proto__":{"to":"0xEVIL"},"a":2,"b":1}'],
      ['{"__proto__":null}', '{"__proto__":null}'],
      ['{"__proto__":1}', '{"__proto__":1}'],
      [
        '{"n":{"approved":false,"__proto__":{"approved":true}}}',
        '{"n":{"__proto__":{"approved":true},"approved":false}}',
      ],
      ['[{"__proto__":[{"__proto__":"x"}]}]', '[{"__proto__":[{"__proto__":"x"}]}]'],
    ];
    for (const [text, canonical] of cases) {
      const value = JSON.parse(text) as unknown;
      assert.equal(canonicalJson(value), canonical, text);
      assert.deepEqual(JSON.parse(canonicalJson(value)), value, `${text} reads back whole`);
    }
    const defined: Record<string, unknown> = { z: 1 };
    Object.defineProperty(defined, '__proto__', { value: [1, 2], enumerable: true });
    assert.equal(canonicalJson({ defined }), '{"defined":{"__proto__":[1,2],"z":1}}');
    // The value is left as it was: no prototype set on it, nor on any object JSON.parse makes afterwards.
    const value = JSON.parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    canonicalJson(value);
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('refuses NaN and ±Infinity, naming where they lie, rather than writing null', () => {
    const cases: Array<[value: unknown, path: Array<string | number>, printed: string]> = [
      [NaN, [], 'NaN'],
      [Infinity, [], 'Infinity'],
      [{ a: 1, b: -Infinity }, ['b'], '-Infinity'],
      [[1, [2, NaN]], [1, 1], 'NaN'],
      [JSON.parse('{"reason":1e400}'), ['reason'], 'Infinity'],
      [JSON.parse('{"z":{"__proto__":{"x":[-1e999]}},"a":{"ok":1}}'), ['z', '__proto__', 'x', 0], '-Infinity'],
      [{ b: NaN, a: Infinity }, ['a'], 'Infinity'],
    ];
    for (const [value, where, printed] of cases) {
      assert.throws(
        () => canonicalJson(value),
        (err: unknown) => {
          assert.ok(err instanceof CanonicalJsonError);
          assert.equal(err.code, 'canonical_json_refused');
          assert.deepEqual(err.details, { reason: 'non_finite_number', path: where, value: printed });
          return true;
        },
      );
    }
  });

  it('spells every other value as before: the hostile-input table, dates, undefined, integer-like keys', () => {
    assert.ok(hostileValues.length > 20, 'the hostile-input table was read');
    const values: unknown[] = [
      ...hostileValues.filter((v) => !holdsProtoKey(v)),
      { when: new Date('2026-11-29T07:00:00.123Z'), bad: new Date(NaN), gone: undefined, f: () => 1 },
      { b: 1, 10: 'ten', 9: 'nine', '01': 'not an index', a: [undefined, null, -0] },
      Object.assign(Object.create(null) as Record<string, unknown>, { z: 1, a: { y: 2, x: 3 } }),
      { constructor: { prototype: { x: 1 } }, toString: 'x', hasOwnProperty: 1 },
      [new Map([[1, 2]]), new Set([1])],
      '',
      0,
      -0,
      5e-324,
      1e21,
      null,
      true,
    ];
    for (const value of values) assert.equal(canonicalJson(value), earlierCanonicalJson(value));
    assert.equal(
      canonicalJson({ b: 1, 10: 0, 9: 0 }),
      '{"9":0,"10":0,"b":1}',
      'integer-like keys first, in numeric order',
    );
  });

  it('spells random JSON values as before', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        fc.pre(!holdsProtoKey(value));
        assert.equal(canonicalJson(value), earlierCanonicalJson(value));
      }),
      { numRuns: 500, seed: 7 },
    );
  });
});
