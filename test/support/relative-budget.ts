/**
 * A time bound relative to a baseline measured in the same test, on the same machine and load, for work that
 * waits on I/O (an HTTP round trip, a child process) and so cannot be ordered against a timer.
 *
 * It defends a test against a loaded runner: the baseline (the same kind of request, without the hostile
 * part) slows down with the machine, and so does the bound. It catches what it is meant to catch, work that
 * grows past any constant factor (a regular expression that backtracks, a scan that is not linear): such
 * work takes seconds to minutes where the baseline takes milliseconds.
 * What it does not prove: a constant-factor slowdown (a request twice as slow as its baseline passes).
 */

/** The milliseconds `run` took. */
export async function timeMs(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/** The fastest of `runs` runs of `run`, in milliseconds: the least disturbed by the rest of the machine. */
export async function baselineMs(run: () => Promise<unknown>, runs = 3): Promise<number> {
  let fastest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) fastest = Math.min(fastest, await timeMs(run));
  return fastest;
}

/**
 * The bound for a run of the same kind as a baseline: `factor` times it, plus a second for what one run
 * may lose to the scheduler (a pause of the garbage collector, a slice given to another process).
 */
export function boundFrom(baseline: number, factor = 20): number {
  return factor * baseline + 1_000;
}
