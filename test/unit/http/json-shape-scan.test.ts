/**
 * The bounded scan of JSON text (src/api/http/middleware/json-shape-scan.ts): depth and object keys counted
 * outside strings only (brackets, braces, colons and escaped quotes inside strings count for nothing), the
 * first bound passed named, and agreement with JSON.parse on generated documents.
 */
import assert from 'node:assert/strict';
import { scanJsonShape } from '../../../src/api/http/middleware/json-shape-scan.js';

const limits = { maxDepth: 3, maxKeys: 4 };

/** Depth and key count of a parsed value, for comparison. */
function shapeOf(value: unknown, depth = 0): { depth: number; keys: number } {
  if (value === null || typeof value !== 'object') return { depth, keys: 0 };
  const inner = Array.isArray(value) ? value : Object.values(value);
  let deepest = depth + 1;
  let keys = Array.isArray(value) ? 0 : inner.length;
  for (const v of inner) {
    const s = shapeOf(v, depth + 1);
    deepest = Math.max(deepest, s.depth);
    keys += s.keys;
  }
  return { depth: deepest, keys };
}

describe('scanJsonShape', () => {
  it('counts nesting and keys outside strings only', () => {
    assert.equal(scanJsonShape('{"a":{"b":[1,2]},"c":"{[:]}"}', limits), undefined);
    assert.equal(scanJsonShape('{"a":"\\"{{{{{{:::::\\\\"}', limits), undefined, 'escaped quotes and backslashes');
    assert.equal(scanJsonShape('"[[[[[[[[[["', limits), undefined);
    assert.equal(scanJsonShape('', limits), undefined);
  });

  it('names the first bound passed', () => {
    assert.deepEqual(scanJsonShape('[[[[1]]]]', limits), { limit: 'depth', max: 3 });
    assert.deepEqual(scanJsonShape('{"a":1,"b":2,"c":3,"d":4,"e":5}', limits), { limit: 'keys', max: 4 });
    assert.equal(scanJsonShape('[[[1]]]', limits), undefined, 'exactly at the bound');
    assert.equal(scanJsonShape('{"a":1,"b":2,"c":3,"d":4}', limits), undefined);
    assert.deepEqual(scanJsonShape('[{"a":"\\\\"},{"b":{"c":{"d":1}}}]', limits), { limit: 'depth', max: 3 });
  });

  it('agrees with JSON.parse on generated documents', () => {
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const strings = ['plain', '{[:', '\\"', 'a"b', ':"}]', '\\\\'];
    const make = (depth: number): unknown => {
      const kind = depth > 5 ? 0 : random(4);
      if (kind === 0) return random(2) ? strings[random(strings.length)] : random(100);
      if (kind === 1) return Array.from({ length: random(4) }, () => make(depth + 1));
      return Object.fromEntries(
        Array.from({ length: random(4) }, (_, i) => [`${strings[random(6)]}${i}`, make(depth + 1)]),
      );
    };
    for (let i = 0; i < 500; i++) {
      const value = make(0);
      const text = JSON.stringify(value);
      const { depth, keys } = shapeOf(value);
      const bounds = { maxDepth: 1 + random(6), maxKeys: random(12) };
      const expected = depth > bounds.maxDepth ? 'depth' : keys > bounds.maxKeys ? 'keys' : undefined;
      const found = scanJsonShape(text, bounds)?.limit;
      // Both bounds passed: the scan names whichever it met first in the text.
      if (expected && depth > bounds.maxDepth && keys > bounds.maxKeys) assert.ok(found, text);
      else assert.equal(found, expected, `${text} ${JSON.stringify(bounds)}`);
    }
  });
});
