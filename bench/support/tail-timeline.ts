/**
 * Lays a steady phase's slow requests beside what the processes were doing then (./steady-tail.ts): the
 * event-loop delay and garbage collections of the API and the signer (./loop-probe.ts slices) and PostgreSQL's
 * waits (./pg-wait-sampler.ts), all on the wall clock. For each burst of slow requests
 * (./slow-request-bursts.ts) it names the longest loop stall and the collections in its window in each process,
 * and the longest-running statement; over the phase, how often each process stalled and the median gap between
 * its collections (a regular gap that matches the bursts' names their cause).
 *
 * Pure: no I/O. Limits: a burst overlapping a stall is not proof the stall made it (both may come from the
 * machine's scheduler); a request's window is its start to its end, a slice's is the `sliceMs` before its end.
 */
import type { ProbeSlice } from './loop-probe.js';
import type { PgWaitSample } from './pg-wait-sampler.js';
import { slowRequestBursts, type TimedRequest } from './slow-request-bursts.js';

export interface ProcessTimeline {
  name: string;
  slices: ProbeSlice[];
}

interface Window {
  from: number;
  to: number;
}

/** In `slices` over [from, to] (epoch ms): the longest loop delay, and the collections that started in it. */
function during(slices: readonly ProbeSlice[], w: Window, sliceMs: number) {
  let maxMs = 0;
  const gc: string[] = [];
  for (const s of slices) {
    if (s.at < w.from || s.at - sliceMs > w.to) continue;
    maxMs = Math.max(maxMs, s.maxMs);
    for (const g of s.gc) if (g.at >= w.from - 5 && g.at <= w.to) gc.push(`${g.kind} ${g.ms.toFixed(0)}`);
  }
  return `loop ≤${maxMs.toFixed(0)} ms${gc.length > 0 ? `, gc ${gc.join(' + ')}` : ''}`;
}

/** The longest-running statement by application in the samples over `w`. */
function pgDuring(samples: readonly PgWaitSample[], w: Window): string {
  const oldest: Record<string, number> = {};
  const waits: Record<string, number> = {};
  for (const s of samples) {
    if (s.at < w.from || s.at > w.to) continue;
    for (const [app, ms] of Object.entries(s.oldestMs)) oldest[app] = Math.max(oldest[app] ?? 0, ms);
    for (const [wait, n] of Object.entries(s.waits)) if (wait !== 'cpu') waits[wait] = (waits[wait] ?? 0) + n;
  }
  const apps = Object.entries(oldest).map(([app, ms]) => `${app.replace('treasury-', '')} ${ms.toFixed(0)}`);
  const top = Object.entries(waits)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 2)
    .map(([w, n]) => `${w}×${n}`);
  return `pg oldest ${apps.join('/') || '–'}${top.length > 0 ? ` (${top.join(', ')})` : ''}`;
}

const median = (xs: number[]) =>
  xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

/** One process over the phase: slices with a stall over 10 and 20 ms, collections by kind, median gap between collections. */
function processSummary(p: ProcessTimeline, w: Window, requests: number, sliceMs: number): string {
  const slices = p.slices.filter((s) => s.at > w.from && s.at - sliceMs < w.to);
  const gcs = slices.flatMap((s) => s.gc).sort((a, b) => a.at - b.at);
  const byKind = new Map<string, { n: number; ms: number; max: number }>();
  for (const g of gcs) {
    const k = byKind.get(g.kind) ?? { n: 0, ms: 0, max: 0 };
    byKind.set(g.kind, { n: k.n + 1, ms: k.ms + g.ms, max: Math.max(k.max, g.ms) });
  }
  const perThousand = (n: number) => ((n / Math.max(1, requests)) * 1000).toFixed(1);
  const kinds = [...byKind].map(
    ([kind, k]) =>
      `${kind} ${k.n} (${perThousand(k.n)} per 1,000 requests; ${k.ms.toFixed(0)} ms, longest ${k.max.toFixed(0)})`,
  );
  const gaps = gcs.filter((g) => g.kind !== 'weakcb').flatMap((g, i, all) => (i === 0 ? [] : [g.at - all[i - 1]!.at]));
  const over = (ms: number) => slices.filter((s) => s.maxMs > ms).length;
  const young = Math.max(0, ...slices.map((s) => s.newSpaceMb ?? 0));
  return `${p.name}: ${slices.length} slices, loop delay over 10 ms in ${over(10)}, over 20 ms in ${over(20)}; gc ${kinds.join(', ') || 'none'}; median gap between collections ${Number.isNaN(median(gaps)) ? '–' : `${median(gaps).toFixed(0)} ms`}; young generation up to ${young.toFixed(1)} MB`;
}

export interface TailTimelineInput {
  /** Epoch ms of the phase's start: `requests`' startMs are from it. */
  startedAtEpochMs: number;
  requests: readonly TimedRequest[];
  processes: readonly ProcessTimeline[];
  pg: readonly PgWaitSample[];
  sliceMs: number;
  thresholdMs?: number;
  /** Bursts listed at most (the largest first). */
  maxBursts?: number;
}

/** Report lines: one per process over the phase, then one per burst of slow requests (largest first). */
export function tailTimeline(input: TailTimelineInput): string[] {
  const { startedAtEpochMs: t0, requests, sliceMs } = input;
  const threshold = input.thresholdMs ?? 20;
  const end = t0 + Math.max(0, ...requests.map((r) => r.startMs + r.latencyMs));
  const lines = input.processes.map((p) => processSummary(p, { from: t0, to: end }, requests.length, sliceMs));
  const bursts = slowRequestBursts(requests, threshold);
  const worst = new Map<number, number>();
  for (const r of requests) {
    if (r.latencyMs <= threshold) continue;
    const b = bursts.bursts.findIndex((x) => r.startMs >= x.startMs && r.startMs <= x.endMs);
    worst.set(b, Math.max(worst.get(b) ?? 0, r.startMs + r.latencyMs));
  }
  const listed = bursts.bursts
    .map((b, i) => ({ ...b, i }))
    .sort((a, b) => b.requests - a.requests)
    .slice(0, input.maxBursts ?? 12)
    .sort((a, b) => a.startMs - b.startMs);
  for (const b of listed) {
    const w = { from: t0 + b.startMs, to: t0 + (worst.get(b.i) ?? b.endMs) };
    const where = input.processes.map((p) => `${p.name} ${during(p.slices, w, sliceMs)}`).join('; ');
    const pg = input.pg.length > 0 ? `; ${pgDuring(input.pg, w)}` : '';
    lines.push(`burst at ${b.startMs.toFixed(0)}–${(w.to - t0).toFixed(0)} ms, ${b.requests} slow: ${where}${pg}`);
  }
  return lines;
}
