/**
 * The closed loop over a list that pay-bench's first-payment phase and (d)'s warm-up use: `concurrency` loops
 * take the next item until every item was done once (each wallet paid exactly once, whatever the latency), beside
 * ./closed-loop.ts's `drive`, which runs for a time; and a result's rate.
 *
 * Limits: an `op` that throws rejects the whole run, as in `drive`; items are taken in order, not shuffled.
 */
import type { DriveResult } from './closed-loop.js';

/** A result's operations a second. */
export const rate = (r: DriveResult): number => r.ops / r.seconds;

/** Closed loop over a list: `concurrency` loops take the next item until every item was done once. */
export async function driveEach<T>(
  concurrency: number,
  items: readonly T[],
  op: (item: T) => Promise<boolean>,
): Promise<DriveResult> {
  const latenciesMs: number[] = [];
  let ops = 0;
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const t0 = performance.now();
        const ok = await op(items[next++]!);
        latenciesMs.push(performance.now() - t0);
        if (ok) ops++;
        else errors++;
      }
    }),
  );
  return { ops, seconds: (performance.now() - started) / 1000, latenciesMs: latenciesMs.sort((a, b) => a - b), errors };
}
