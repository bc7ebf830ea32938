/**
 * bench/support/closed-loop.ts `driveAlternating`: the variants take turns slice by slice (the order reversed every
 * other round, so that neither always follows the other), each variant's slices are summed, and what the sample
 * moved during each slice (and each named counter of `parts`) is credited to that slice's variant only.
 */
import assert from 'node:assert/strict';
import { driveAlternating } from '../../../bench/support/closed-loop.js';

describe('driveAlternating (bench slices)', () => {
  it('alternates the variants, reversing the order every other round, and credits each slice its own CPU', async () => {
    const order: string[] = [];
    let counter = 0;
    const parts = { a: 0, b: 0 };
    let current = '';
    const op = (name: 'a' | 'b', cost: number) => async () => {
      if (current !== name) order.push(name);
      current = name;
      counter += cost;
      parts[name] += 1;
      await new Promise((r) => setTimeout(r, 5));
      return true;
    };
    const result = await driveAlternating(
      { a: op('a', 1), b: op('b', 10) },
      { rounds: 3, concurrency: 2, sliceSeconds: 0.05, sample: () => counter, parts: () => ({ ...parts }) },
    );
    // a b | b a | a b: the variant that ended a round starts the next, so it runs on without a switch.
    assert.deepEqual(order, ['a', 'b', 'a', 'b']);
    for (const [name, cost] of [
      ['a', 1],
      ['b', 10],
    ] as const) {
      const r = result[name];
      assert.equal(r.slices.length, 3);
      assert.equal(
        r.ops,
        r.slices.reduce((t, s) => t + s.ops, 0),
      );
      assert.ok(r.ops > 0);
      assert.equal(r.cpuSeconds, r.ops * cost, `${name}: only its own operations are counted`);
      // Each named counter is summed over all of the variant's slices, not just its last.
      assert.deepEqual(r.cpuParts, name === 'a' ? { a: r.ops, b: 0 } : { a: 0, b: r.ops });
      assert.equal(r.latenciesMs.length, r.ops + r.errors);
    }
  });
});
