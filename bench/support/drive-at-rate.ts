/**
 * The open-loop driver of the steady phases (pay-bench's (c) and its floor, ./steady-tail.ts): one operation
 * started every 1/rate seconds whatever the latency (up to `maxInFlight`, beyond which arrivals count as
 * errors), so that latency is measured at a steady offered load, not at saturation. Records every request's
 * start and latency, and the latencies of each second's requests.
 *
 * Limits: timer-paced in the load generator's own event loop, so a stall of the load generator delays the
 * arrivals it should have made (they are then sent late, back to back, and measured from when they left), and
 * the responses that arrive meanwhile (measured late). So that its own full collection does not fall inside a
 * phase, the load generator runs one just before it, with room to double its old generation before the next
 * (./full-collection.ts), and keeps nothing per request but its start and latency.
 */
import { fullCollection, letOldGenerationDouble } from './full-collection.js';
import type { TimedRequest } from './slow-request-bursts.js';

export interface RateResult {
  ops: number;
  seconds: number;
  latenciesMs: number[];
  errors: number;
  /** The latencies of the requests sent in each second of the phase (index = second), sorted. */
  bySecond: number[][];
  /** Each request's start (ms into the phase) and latency. */
  timed: TimedRequest[];
  /** When the phase started (epoch ms), to set `timed` beside other clocks. */
  startedAtEpochMs: number;
}

export async function driveAtRate(
  rate: number,
  seconds: number,
  maxInFlight: number,
  op: (i: number) => Promise<boolean>,
): Promise<RateResult> {
  const latenciesMs: number[] = [];
  const timed: TimedRequest[] = [];
  let ops = 0;
  let errors = 0;
  let inFlight = 0;
  let drained: (() => void) | undefined;
  let failure: { err: unknown } | undefined;
  letOldGenerationDouble();
  fullCollection();
  const started = performance.now();
  const startedAtEpochMs = performance.timeOrigin + started;
  const total = Math.round(rate * seconds);
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    if (inFlight >= maxInFlight) {
      errors++;
      continue;
    }
    inFlight++;
    const t0 = performance.now();
    op(i).then(
      (ok) => {
        const ms = performance.now() - t0;
        latenciesMs.push(ms);
        timed.push({ startMs: t0 - started, latencyMs: ms });
        if (ok) ops++;
        else errors++;
        if (--inFlight === 0) drained?.();
      },
      (err: unknown) => {
        failure ??= { err };
        if (--inFlight === 0) drained?.();
      },
    );
  }
  if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
  if (failure) throw failure.err;
  const bySecond: number[][] = Array.from({ length: Math.ceil(seconds) }, () => []);
  for (const r of timed) bySecond[Math.min(bySecond.length - 1, Math.floor(r.startMs / 1000))]!.push(r.latencyMs);
  return {
    ops,
    seconds: (performance.now() - started) / 1000,
    latenciesMs: latenciesMs.sort((a, b) => a - b),
    errors,
    bySecond: bySecond.map((l) => l.sort((a, b) => a - b)),
    timed,
    startedAtEpochMs,
  };
}
