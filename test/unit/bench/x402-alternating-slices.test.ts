/**
 * The seller bench's alternation (bench/support/x402-alternating-slices.ts): variants take turns, the order
 * reversed every other round; each variant is credited its own server's CPU over the whole stretch; a variant
 * whose payments run out ends the run for every variant; /proc/stat's first line is read as busy, steal and total.
 */
import assert from 'node:assert/strict';
import { readMachineTicks, runAlternated, type SliceVariant } from '../../../bench/support/x402-alternating-slices.js';
import type { ServerChild } from '../../../bench/support/x402-bench-children.js';
import type { Outcome } from '../../../bench/support/x402-bench-load.js';

/** A server whose CPU counter moves by `perRequest` µs for each request its variant sends. */
function fakeServer(name: string, perRequest: number, order: string[], budget = Infinity) {
  let cpu = 0;
  let left = budget;
  const server = {
    name,
    port: 0,
    child: { pid: undefined },
    stats: () => Promise.resolve({ cpuUserUs: cpu, cpuSystemUs: 0, rss: 0 }),
  } as unknown as ServerChild;
  const op = (): Promise<Outcome> =>
    new Promise((resolve) =>
      setImmediate(() => {
        if (left-- <= 0) return resolve('exhausted');
        if (order.at(-1) !== name) order.push(name);
        cpu += perRequest;
        resolve({ ok: true });
      }),
    );
  return { label: name, server, op } satisfies SliceVariant;
}

describe('bench: alternating slices of the seller bench', () => {
  it('alternates the variants, reversed every other round, and credits each its own server CPU', async () => {
    const order: string[] = [];
    const out = await runAlternated([fakeServer('a', 100, order), fakeServer('b', 300, order)], {
      rounds: 4,
      sliceSeconds: 0.05,
      concurrency: 2,
    });
    assert.deepEqual(order, ['a', 'b', 'a', 'b', 'a']);
    assert.equal(out.exhausted, false);
    const [a, b] = out.variants;
    assert.equal(a!.slices.length, 4);
    assert.deepEqual(
      b!.slices.map((s) => s.round),
      [0, 1, 2, 3],
    );
    assert.equal(a!.cpuUsPerRequest, 100);
    assert.equal(b!.cpuUsPerRequest, 300);
    assert.ok(a!.slices.every((s) => s.serverCpuUsPerRequest === 100));
    assert.equal(
      a!.result.ok,
      a!.slices.reduce((n, s) => n + s.requests, 0),
    );
  });

  it('ends every variant once one runs out of payments', async () => {
    const order: string[] = [];
    const out = await runAlternated([fakeServer('a', 100, order, 5), fakeServer('b', 100, order)], {
      rounds: 6,
      sliceSeconds: 0.05,
      concurrency: 2,
    });
    assert.equal(out.exhausted, true);
    assert.equal(out.variants[0]!.result.ok, 5);
    assert.equal(out.variants[0]!.slices.length, 1);
    assert.equal(out.variants[1]!.slices.length, 0, 'the run stopped before the other variant went');
  });

  it("reads /proc/stat's first line as busy, steal and total ticks", () => {
    const ticks = readMachineTicks('cpu  100 5 20 1000 7 1 2 3 0 0');
    assert.deepEqual(ticks, { busy: 128, steal: 3, total: 1138 });
  });
});
