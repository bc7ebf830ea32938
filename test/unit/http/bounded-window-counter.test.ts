/** The bounded per-key window counter (src/api/http/middleware/bounded-window-counter.ts): windows and eviction. */
import assert from 'node:assert/strict';
import { BoundedWindowCounter } from '../../../src/api/http/middleware/bounded-window-counter.js';

describe('BoundedWindowCounter', () => {
  it('counts per key within a window and starts again after it', () => {
    let now = 1_000;
    const counter = new BoundedWindowCounter(500, 10, () => now);
    assert.deepEqual(counter.hit('a'), { count: 1, msBeforeReset: 500 });
    now += 100;
    assert.deepEqual(counter.hit('a'), { count: 2, msBeforeReset: 400 });
    assert.deepEqual(counter.peek('a'), { count: 2, msBeforeReset: 400 });
    assert.deepEqual(counter.peek('b'), { count: 0, msBeforeReset: 0 });
    now += 400;
    assert.deepEqual(counter.peek('a'), { count: 0, msBeforeReset: 0 }, 'the window ended');
    assert.deepEqual(counter.hit('a'), { count: 1, msBeforeReset: 500 });
  });

  it('holds at most maxKeys keys, forgetting the oldest window first', () => {
    let now = 0;
    const counter = new BoundedWindowCounter(1_000, 3, () => now);
    for (const key of ['a', 'b', 'c']) {
      counter.hit(key);
      now += 1;
    }
    counter.hit('a'); // same window: a keeps its place
    counter.hit('d');
    assert.equal(counter.peek('a').count, 0, 'a, the oldest window, is forgotten');
    assert.deepEqual(
      ['b', 'c', 'd'].map((k) => counter.peek(k).count),
      [1, 1, 1],
    );
  });
});
