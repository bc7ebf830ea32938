/**
 * A probe the benches load into the API and the signer (`--import <this file>` with LOOP_PROBE_FILE set; see
 * ./steady-tail.ts): every `LOOP_PROBE_SLICE_MS` (default 100) it appends one line to LOOP_PROBE_FILE with the
 * slice's event-loop delay (perf_hooks.monitorEventLoopDelay at 1 ms resolution: max and p99), each garbage
 * collection that ended in it (kind, start and duration) and the young generation's size, timed on the wall clock (epoch ms) so that the
 * bench can lay the two processes' stalls beside its own requests.
 *
 * Why: a steady phase's tail is made by moments when a process cannot run its event loop (a collection, a long
 * synchronous task, the machine's scheduler); per-second figures blur them, per-slice ones name them.
 * Does not measure: what ran during a stall (a CPU profile does), the time a process waited for a CPU (it
 * shows as delay without a collection). Loaded only by the benches; nothing in the services imports it.
 */
import fs from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver, constants } from 'node:perf_hooks';
import v8 from 'node:v8';

const file = process.env.LOOP_PROBE_FILE;
const sliceMs = Math.min(1000, Math.max(10, Number(process.env.LOOP_PROBE_SLICE_MS ?? 100) || 100));

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** One slice as written: its end (epoch ms), event-loop delay max and p99 (ms), and the collections in it. */
export interface ProbeSlice {
  at: number;
  maxMs: number;
  p99Ms: number;
  gc: Array<{ kind: string; at: number; ms: number }>;
  /** The young generation's size at the slice's end, MB (both semi-spaces). */
  newSpaceMb: number;
}

/**
 * Appends a slice to `path` every `sliceMs`: at import when LOOP_PROBE_FILE is set (the services), or when a process
 * that loads no preload asks for it (the bench's own load generator, ./steady-tail.ts).
 */
export function startLoopProbe(path: string): void {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let gc: ProbeSlice['gc'] = [];
  const epoch = (t: number) => performance.timeOrigin + t;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? -1;
      gc.push({ kind: KINDS[kind] ?? String(kind), at: Math.round(epoch(e.startTime)), ms: +e.duration.toFixed(2) });
    }
  }).observe({ entryTypes: ['gc'] });
  const out = fs.openSync(path, 'a');
  setInterval(() => {
    const slice: ProbeSlice = {
      at: Math.round(epoch(performance.now())),
      maxMs: +(delay.max / 1e6).toFixed(2),
      p99Ms: +(delay.percentile(99) / 1e6).toFixed(2),
      gc,
      newSpaceMb: +(
        (v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.space_size ?? 0) / 1e6
      ).toFixed(1),
    };
    gc = [];
    delay.reset();
    fs.writeSync(out, JSON.stringify(slice) + '\n');
  }, sliceMs).unref();
}

if (file) startLoopProbe(file);
