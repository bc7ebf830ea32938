/**
 * The report of `BENCH_PHASES=saturation npm run bench`: (a) and (b) alone, set beside the raw HSM ceiling measured
 * just before and just after them, with what each payment cost each process — the figures an A/B of the pay path
 * compares, in about a third of a whole run's time.
 *
 * Why the ceiling twice: on a machine shared with other work the raw rate moves between the two moments; the ratio
 * is read against their mean, and their spread says how far the run can be trusted. Pure: it formats what it is
 * given. Limits: none of the whole report's other phases (the steady phase, the signed path, the store's cost, the
 * PAT) nor its other ceilings.
 */
import type { DriveResult } from './closed-loop.js';
import { failureLines, resultTable } from './service-bench-parts.js';
import { rate } from './drive-each.js';
import { beyondServices, type CpuSample } from './pay-bench-cpu.js';
import { gcBetween, phaseLine } from './pay-bench-metrics.js';
import type { ServiceThreads } from './pay-bench-steady.js';
import { threadsLine, threadsPerOp } from './thread-switches.js';

/** Three moments: before (a), after (a) (= before (b)), after (b). */
type AroundAB<T> = readonly [before: T, afterSpread: T, afterHot: T];

export interface SaturationReportInput {
  machine: { cores: number; node: string; at: string; code: 'dist' | 'sources' };
  concurrency: number;
  wallets: number;
  /** The raw HSM ceiling before (a) and after (b). */
  hsm: readonly [before: DriveResult, after: DriveResult];
  spread: DriveResult;
  hot: DriveResult;
  cpu: AroundAB<CpuSample>;
  threads: AroundAB<ServiceThreads>;
  metrics: AroundAB<string>;
  failures: Map<string, number>;
  failureCodes: Map<string, Map<string, number>>;
}

/** CPU per pay by process between two samples, µs. */
function cpuPerPay(before: CpuSample, after: CpuSample, ops: number) {
  const per = (seconds: number) => Math.round((seconds / ops) * 1e6);
  return {
    api: per(after.api - before.api),
    signer: per(after.signer - before.signer),
    load: per(after.self - before.self),
    rest: per(beyondServices(before, after)),
    machine: per(after.machine - before.machine),
  };
}

export function saturationReport(r: SaturationReportInput): string[] {
  const [hsmBefore, hsmAfter] = r.hsm;
  const raw = (rate(hsmBefore) + rate(hsmAfter)) / 2;
  const { header, rule, row } = resultTable(44, 30);
  const [cpu0, cpu1, cpu2] = r.cpu;
  const [m0, m1, m2] = r.metrics;
  const [t0, t1, t2] = r.threads;
  const phases = [['(a)', r.spread, cpu0, cpu1, t0, t1] as const, ['(b)', r.hot, cpu1, cpu2, t1, t2] as const];
  const summary = phases.map(([label, result, before, after]) => {
    const c = cpuPerPay(before, after, result.ops);
    return `${label} ${rate(result).toFixed(0)}/s, ${(rate(result) / raw).toFixed(3)}× raw; CPU per pay, µs: API ${c.api}, signer ${c.signer}, load generator ${c.load}, PostgreSQL and the rest ${c.rest}; machine ${c.machine}`;
  });
  const threadLines = phases.map(([label, result, , , before, after]) => {
    const parts = (['api', 'signer'] as const)
      .map((k) => threadsLine(k === 'api' ? 'API' : 'signer', threadsPerOp(before[k], after[k], result.ops)))
      .filter(Boolean);
    return `  ${label}: ${parts.join('; ')}`;
  });
  const { machine } = r;
  return [
    '',
    `Treasury pay benchmark, saturation phases only — ${machine.cores} cores, Node ${machine.node}, ${machine.at}, the services ${machine.code === 'dist' ? 'compiled' : 'through tsx'}`,
    '',
    header,
    rule,
    row('ceiling: SoftHSM sign via backend, before', hsmBefore, []),
    row('ceiling: SoftHSM sign via backend, after', hsmAfter, []),
    row(`pay via HTTP, ${r.wallets} wallets (${r.concurrency} cl.)`, r.spread, [
      ['HSM before', hsmBefore],
      ['after', hsmAfter],
    ]),
    row(`pay via HTTP, one hot wallet (${r.concurrency} cl.)`, r.hot, [
      ['HSM before', hsmBefore],
      ['after', hsmAfter],
    ]),
    '',
    `raw HSM ${rate(hsmBefore).toFixed(0)}/s before and ${rate(hsmAfter).toFixed(0)}/s after (mean ${raw.toFixed(0)}/s, ratios below against the mean)`,
    ...summary,
    'by thread, a payment (./thread-switches.ts):',
    ...threadLines,
    `per phase: ${phaseLine('(a)', m0, m1, r.spread.ops)}; ${phaseLine('(b)', m1, m2, r.hot.ops)}`,
    `API garbage collection in (a) and (b): ${gcBetween(m0, m2, r.spread.ops + r.hot.ops)}`,
    ...failureLines(r.failures, r.failureCodes),
    '',
  ];
}
