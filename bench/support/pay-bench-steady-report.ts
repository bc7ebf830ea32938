/**
 * The report's lines on `npm run bench`'s steady phase (c) (./pay-bench-steady.ts): the p99 of each stage inside
 * the API, each second's p99 and what the machine did that second (busy, PostgreSQL's upkeep, the kernel's own
 * threads, the disk, the hypervisor), the kernel's threads and memory monitors, the bursts of slow requests beside
 * the API's and the signer's event-loop stalls and collections (./tail-timeline.ts), the floor's tail and CPU
 * beside (c)'s, and PostgreSQL's side: its costliest statements, the page cache, the WAL and autovacuum.
 *
 * Why: the steady target (p99 ≤ 20 ms at 400 pays/s) is missed either by a few stalls or by running too close to
 * saturation, and by the machine or by the service; these lines tell which. Pure: it formats what it is given
 * (the probes' slices and the running DAMON monitors read by the caller).
 */
import { percentile } from './closed-loop.js';
import { slowRequestBursts } from './slow-request-bursts.js';
import { tailTimeline } from './tail-timeline.js';
import { PROBE_SLICE_MS } from './loop-probe-slices.js';
import type { ProbeSlice } from './loop-probe.js';
import type { DamonMonitor } from './kernel-thread-cpu.js';
import { kernelThreadSeconds } from './pay-bench-cpu.js';
import { p99Between } from './pay-bench-metrics.js';
import type { FloorWork, SteadyRun } from './pay-bench-steady.js';

export interface SteadyReportInput {
  run: SteadyRun;
  floorWork: FloorWork;
  /** The DAMON memory monitors running at the end (./kernel-thread-cpu.ts). */
  damon: DamonMonitor[];
  /** What the loop probe wrote in the API and in the signer (./loop-probe-slices.ts). */
  probes: { api: ProbeSlice[]; signer: ProbeSlice[] };
}

/** The lines from the API's p99 by stage to autovacuum's runs, in the report's order. */
export function steadyReportLines(input: SteadyReportInput): string[] {
  const { run, floorWork, damon } = input;
  const { steady, metrics, metricsBefore: metricsBeforeSteady } = run;
  const { cpuBefore: cpuBeforeSteady, cpuAfter: cpuAfterSteady } = run;
  const steadyFloor = run.floor.result;
  const floorCpu = run.floor.cpu;
  const floorBusy = floorWork.front + floorWork.echo > 0;
  const p99InSteady = (name: string, labels: string) => p99Between(metricsBeforeSteady, metrics, name, labels);
  const tailLine = `p99 inside the API in (c), ms (histogram bucket bounds; mean): decision ${p99InSteady('treasury_db_transaction_duration_seconds', 'operation="pay"')}, signer call ${p99InSteady('treasury_signer_call_duration_seconds', 'method="sign_transfer_authorization"')}, write of the signature ${p99InSteady('treasury_db_transaction_duration_seconds', 'operation="pay_record"')}, whole request ${p99InSteady('treasury_http_request_duration_seconds', 'method="POST",route="/v1/wallets/:id/pay"')}`;
  /**
   * The tail's shape in (c): the p99 of each second's requests. A tail made by a few stalls (a long garbage
   * collection, the hypervisor taking the CPUs) shows as a few bad seconds among good ones; one made by
   * running too close to saturation shows in every second.
   */
  const secondsP99 = (steady.bySecond ?? []).filter((l) => l.length > 0).map((l) => percentile(l, 99));
  const sortedSecondsP99 = [...secondsP99].sort((a, b) => a - b);
  const bySecondLine = `p99 of each second's requests in (c), ms: ${
    secondsP99.length <= 12
      ? secondsP99.map((v) => v.toFixed(0)).join(', ')
      : `best ${sortedSecondsP99[0]!.toFixed(0)}, median ${percentile(sortedSecondsP99, 50).toFixed(0)}, worst ${sortedSecondsP99.at(-1)!.toFixed(0)}`
  } (≤ 20 ms in ${secondsP99.filter((v) => v <= 20).length} of ${secondsP99.length} seconds)`;
  /** Each second of (c): the machine's busy share, PostgreSQL's own upkeep in it (all but client backends), time waiting on the disk, the hypervisor's share. */
  const secondShares = run.seconds.slice(1).map((after, i) => {
    const before = run.seconds[i]!;
    const pgUpkeep = Object.keys(after.pg)
      .filter((role) => role !== 'backends')
      .reduce((sum, role) => sum + (after.pg[role] ?? 0) - (before.pg[role] ?? 0), 0);
    const pct = (seconds: number) => ((seconds / 2) * 100).toFixed(0);
    return `${pct(after.machine - before.machine)}/${pct(pgUpkeep)}/${pct(kernelThreadSeconds(before, after))}/${pct(after.iowait - before.iowait)}/${pct(after.steal - before.steal)}`;
  });
  const busyBySecondLine = `each second of (c), % of the two cores — busy / PostgreSQL upkeep (autovacuum, WAL writer, checkpointer…) / the kernel's own threads / waiting on the disk (iowait) / stolen by the hypervisor: ${secondShares.join(', ')}`;
  /** The kernel's own threads over (c) by kind, and the memory monitors (DAMON) that wake on a timer. */
  const kernelShares = Object.keys(cpuAfterSteady.kernel)
    .map(
      (kind) =>
        [
          kind,
          ((cpuAfterSteady.kernel[kind] ?? 0) - (cpuBeforeSteady.kernel[kind] ?? 0)) / steady.seconds / 2,
        ] as const,
    )
    .filter(([, share]) => share >= 0.001)
    .sort((a, b) => b[1] - a[1]);
  const kernelLine = `the kernel's own threads in (c), % of the two cores: ${kernelShares.length === 0 ? 'none above 0.1' : kernelShares.map(([kind, share]) => `${kind} ${(share * 100).toFixed(1)}`).join(', ')}; DAMON memory monitors running: ${
    damon.length === 0
      ? 'none'
      : damon
          .map(
            (m) =>
              `${m.name} (samples every ${m.sampleMs} ms, aggregates every ${m.aggregateMs} ms; schemes: ${m.actions.join(', ') || 'none'})`,
          )
          .join(', ')
  }`;
  const bursts = slowRequestBursts(steady.timed ?? [], 20);
  // The API's and the signer's event loops and collections beside (c)'s slow requests (./tail-timeline.ts).
  const stalls = tailTimeline({
    startedAtEpochMs: steady.startedAtEpochMs,
    requests: steady.timed,
    processes: [
      { name: 'API', slices: input.probes.api },
      { name: 'signer', slices: input.probes.signer },
    ],
    pg: [],
    sliceMs: PROBE_SLICE_MS,
    maxBursts: 6,
  });
  const burstLine = `requests over 20 ms in (c): ${bursts.slow} of ${steady.ops + steady.errors}, in ${bursts.bursts.length} bursts (./support/slow-request-bursts.ts: slow requests less than 100 ms apart); median gap between bursts' starts ${Number.isNaN(bursts.medianGapMs) ? '–' : `${bursts.medianGapMs.toFixed(0)} ms`} (a regular gap names a periodic cause, e.g. a monitor's sampling period above)`;
  const floorBursts = slowRequestBursts(steadyFloor.timed ?? [], 20);
  const floorLine = `the steady floor, just before (c) (./support/steady-floor.ts: an HTTP front, an echo process over a unix socket, one group-committed insert; ${floorBusy ? `${floorWork.front} and ${floorWork.echo} µs of busy work per request in the front and the echo (BENCH_FLOOR_WORK_US)` : "none of a payment's work"}): p50 ${percentile(steadyFloor.latenciesMs, 50).toFixed(1)} ms, p99 ${percentile(steadyFloor.latenciesMs, 99).toFixed(1)} ms, ${floorBursts.slow} of ${steadyFloor.ops + steadyFloor.errors} requests over 20 ms in ${floorBursts.bursts.length} bursts; its processes ${floorCpu.floor.toFixed(0)} µs and the machine ${floorCpu.machine.toFixed(0)} µs of CPU per request, ${(floorCpu.busy * 100).toFixed(0)}% busy. (c)'s p99 is ${(percentile(steady.latenciesMs, 99) / percentile(steadyFloor.latenciesMs, 99)).toFixed(1)} × the floor's (a floor over 20 ms: this machine, not the service, misses the target)`;
  const withSignature = run.floor.withSignature;
  const p99 = (r: { latenciesMs: number[] }) => percentile(r.latenciesMs, 99);
  const signatureFloorLine = withSignature
    ? `the steady floor with a signature's work, just after it (the same processes, its echo busy ${withSignature.echoMicros.toFixed(0)} µs more a request: the HSM's raw CPU and the signer's required work, ./support/signer-ratio-bound.ts — the tail of a service that did nothing but keep the signer's checks; a busy loop, so it errs low): p50 ${percentile(withSignature.result.latenciesMs, 50).toFixed(1)} ms, p99 ${p99(withSignature.result).toFixed(1)} ms, ${(p99(withSignature.result) / p99(steadyFloor)).toFixed(2)} × the floor's p99; (c)'s p99 is ${(p99(steady) / p99(withSignature.result)).toFixed(1)} × this one's`
    : undefined;
  /** PostgreSQL's side of phase (c), per pay, for its costliest statements (pg_stat_statements). */
  const statementLine = `PostgreSQL in (c), per pay (pg_stat_statements): ${run.statementRows
    .map((r) => {
      const per = (v: number) => v / steady.ops;
      const name = /^WITH l AS/.test(r.query)
        ? 'decision write'
        : /^UPDATE authorizations/.test(r.query)
          ? 'signature record'
          : r.query.replace(/\s+/g, ' ').slice(0, 40);
      return `${name}: ${per(Number(r.calls)).toFixed(2)} statements, execution ${(per(r.exec_ms) * 1000).toFixed(0)} µs, planning ${(per(r.plan_ms) * 1000).toFixed(0)} µs (${r.plans} plans), ${per(Number(r.wal_records)).toFixed(1)} WAL records (${per(Number(r.wal_fpi)).toFixed(2)} of them full-page images), ${r.blks_read} pages read from outside shared buffers in all (${r.read_ms.toFixed(0)} ms)`;
    })
    .join('; ')}`;
  const { pageCacheBefore, pageCacheAfter, wal, upkeep } = run;
  return [
    tailLine,
    bySecondLine,
    busyBySecondLine,
    kernelLine,
    burstLine,
    `the API's and the signer's event loops in (c) (./support/loop-probe.ts, ${PROBE_SLICE_MS} ms slices; each burst of slow requests with the longest loop stall and the collections in its window):`,
    ...stalls.map((l) => `  ${l}`),
    floorLine,
    ...(signatureFloorLine ? [signatureFloorLine] : []),
    statementLine,
    `page cache in (c): ${pageCacheAfter.refaults - pageCacheBefore.refaults} file pages read again after eviction, ${pageCacheAfter.majorFaults - pageCacheBefore.majorFaults} major page faults (whole machine, /proc/vmstat)`,
    `WAL in (c): ${(Number(wal.bytes) / 1e6).toFixed(1)} MB, ${(Number(wal.bytes) / steady.ops / 1e3).toFixed(1)} kB per pay; new segments created (zero-filled while commits wait): ${Number(wal.created).toFixed(1)} (a checkpoint before (c) left recycled ones, as on a running server)`,
    `autovacuum in (c), per table (runs finished; their duration, which includes autovacuum's cost-based sleeps, not CPU time): ${upkeep.length === 0 ? 'none' : upkeep.map((u) => `${u.table} ${[u.vacuums > 0 ? `vacuum ×${u.vacuums}` : '', u.analyzes > 0 ? `analyze ×${u.analyzes}` : ''].filter(Boolean).join(' + ')} (${u.ms.toFixed(0)} ms)`).join(', ')}`,
  ];
}
