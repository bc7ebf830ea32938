/**
 * The closed-loop driver the benches share: `concurrency` loops each run `op` again as soon as it answers,
 * until `seconds` have passed, recording every latency; and the percentile the reports read from them.
 *
 * Limits: an `op` that throws rejects the whole run (a bench that counts a throw as an error says so in its
 * `op`); no pacing (an open loop at a set rate is pay-bench's driveAtRate).
 */

export interface DriveResult {
  ops: number;
  seconds: number;
  latenciesMs: number[];
  errors: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `op` from `concurrency` loops for `seconds`, recording each latency. */
export async function drive(
  concurrency: number,
  seconds: number,
  op: (i: number) => Promise<boolean>,
): Promise<DriveResult> {
  const latenciesMs: number[] = [];
  let ops = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let counter = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const ok = await op(counter++);
        latenciesMs.push(performance.now() - t0);
        if (ok) ops++;
        else errors++;
      }
    }),
  );
  return { ops, seconds: (performance.now() - started) / 1000, latenciesMs: latenciesMs.sort((a, b) => a - b), errors };
}
