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

/** Two results of the same loop summed, as one longer run (latencies merged). */
export function addResults(total: DriveResult | undefined, more: DriveResult): DriveResult {
  if (!total) return more;
  return {
    ops: total.ops + more.ops,
    seconds: total.seconds + more.seconds,
    latenciesMs: [...total.latenciesMs, ...more.latenciesMs].sort((a, b) => a - b),
    errors: total.errors + more.errors,
  };
}

/** A variant's slices summed, and what `sample` (a CPU counter, seconds) moved during them; and each slice's. */
export interface AlternatedResult extends DriveResult {
  cpuSeconds: number;
  /** What each counter of `parts` moved during the variant's slices (absent without `parts`). */
  cpuParts?: Record<string, number>;
  /** Each slice (one per round, in order): its operations, seconds and what `sample` moved. */
  slices: Array<{ ops: number; seconds: number; cpuSeconds: number }>;
}

/**
 * Runs each variant's `op` in turn, `sliceSeconds` at a time from `concurrency` loops, `rounds` times, and sums
 * each variant's slices: the variants share every stretch of the run, so that a machine whose speed drifts (a VM's
 * moved by half between runs) slows them alike, and their ratio is the figure. `sample` (e.g. the machine's busy
 * CPU seconds) is read around each slice and its movement summed per variant.
 */
export async function driveAlternating<K extends string>(
  variants: Record<K, (i: number) => Promise<boolean>>,
  options: {
    rounds: number;
    concurrency: number;
    sliceSeconds?: number;
    sample?: () => number;
    /** Named CPU counters (seconds; e.g. each role's processes) read around each slice like `sample`. */
    parts?: () => Record<string, number>;
  },
): Promise<Record<K, AlternatedResult>> {
  const totals = {} as Record<K, AlternatedResult>;
  const sample = options.sample ?? (() => 0);
  for (let round = 0; round < options.rounds; round++) {
    // Each round starts with the variant the last one ended on, so that neither always follows the other.
    const names = Object.keys(variants) as K[];
    if (round % 2 === 1) names.reverse();
    for (const name of names) {
      const before = sample();
      const partsBefore = options.parts?.();
      const slice = await drive(options.concurrency, options.sliceSeconds ?? 1, variants[name]);
      const used = sample() - before;
      const partsAfter = options.parts?.();
      const was = totals[name];
      const slices = [...(was?.slices ?? []), { ops: slice.ops, seconds: slice.seconds, cpuSeconds: used }];
      totals[name] = { ...addResults(was, slice), cpuSeconds: used + (was?.cpuSeconds ?? 0), slices };
      if (partsBefore && partsAfter) {
        const sum = { ...was?.cpuParts };
        for (const [k, v] of Object.entries(partsAfter)) sum[k] = (sum[k] ?? 0) + v - (partsBefore[k] ?? 0);
        totals[name].cpuParts = sum;
      }
    }
  }
  return totals;
}
