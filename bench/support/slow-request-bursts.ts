/**
 * How the slow requests of a steady phase are laid out in time, for `npm run bench`: requests slower than a
 * threshold, grouped into bursts (slow requests that started within `joinMs` of the previous one), and the
 * typical gap between the starts of consecutive bursts.
 *
 * Why: a tail made by something periodic (a kernel thread waking on a timer, a collector running every so
 * often) shows as bursts at a regular interval, which the machine's per-second figures blur; the interval
 * names the suspect. On the 2-core VM the bench was developed on, bursts every ≈ 540 ms matched a kernel
 * memory monitor's 500 ms sampling period (./kernel-thread-cpu.ts).
 */
export interface TimedRequest {
  /** When the request was sent, ms from the start of the phase. */
  startMs: number;
  latencyMs: number;
}

export interface SlowRequestBursts {
  slow: number;
  bursts: Array<{ startMs: number; endMs: number; requests: number }>;
  /** Median gap between the starts of consecutive bursts; NaN with fewer than two bursts. */
  medianGapMs: number;
}

export function slowRequestBursts(
  requests: readonly TimedRequest[],
  thresholdMs: number,
  joinMs = 100,
): SlowRequestBursts {
  const starts = requests
    .filter((r) => r.latencyMs > thresholdMs)
    .map((r) => r.startMs)
    .sort((a, b) => a - b);
  const bursts: SlowRequestBursts['bursts'] = [];
  for (const start of starts) {
    const last = bursts.at(-1);
    if (last && start - last.endMs <= joinMs) {
      last.endMs = start;
      last.requests++;
    } else bursts.push({ startMs: start, endMs: start, requests: 1 });
  }
  const gaps = bursts
    .slice(1)
    .map((b, i) => b.startMs - bursts[i]!.startMs)
    .sort((a, b) => a - b);
  return {
    slow: starts.length,
    bursts,
    medianGapMs: gaps.length === 0 ? NaN : gaps[Math.floor((gaps.length - 1) / 2)]!,
  };
}
