/**
 * The report `npm run bench` prints on stdout: the run's settings, one table of every measurement with its ratio to
 * the ceilings measured in the same run (./service-bench-parts.ts `resultTable`), then what the phases cost — the
 * store's cost (./store-cost-ab.ts), the API's view of a payment by stage and per phase (./pay-bench-metrics.ts),
 * CPU a payment by process and by thread, the signer's and the payments' ratio bounds (./signer-ratio-bound.ts,
 * ./pay-ratio-bound.ts), a wallet's first payment, the machine's hand-offs and wake placement, PostgreSQL's share,
 * the steady phase's lines (./pay-bench-steady-report.ts), garbage collections, and any answer other than 200.
 *
 * Pure: it formats what it is given (the machine's facts, the probes' slices and the DAMON monitors are read by the
 * caller). Limits: a note, not a refusal, when the hypervisor took more than 5 % of the CPU in (a) or (c).
 */
import type { DriveResult } from './closed-loop.js';
import type { RateResult } from './drive-at-rate.js';
import type { SeededHistory } from './seed-payment-history.js';
import type { WakeUpCost } from './wake-up-cost.js';
import type { WakePlacement } from './wake-placement.js';
import { signerRatioBoundLine, type SignerRatioBound } from './signer-ratio-bound.js';
import { payRatioBound, payRatioBoundLine } from './pay-ratio-bound.js';
import { storeCostLines } from './store-cost-ab.js';
import { threadsLine, threadsPerOp } from './thread-switches.js';
import { failureLines, resultTable } from './service-bench-parts.js';
import { rate } from './drive-each.js';
import { beyondServices, partsPerPay, postgresShare, type CpuSample } from './pay-bench-cpu.js';
import { averageMs, gcBetween, phaseLine } from './pay-bench-metrics.js';
import type { SignerCeiling } from './pay-bench-ceilings.js';
import type { StoreCosts } from './pay-bench-store-cost.js';
import type { FloorWork, ServiceThreads, SteadyRun } from './pay-bench-steady.js';
import { steadyReportLines, type SteadyReportInput } from './pay-bench-steady-report.js';

/** Three moments of the saturation phases: before (a), after (a) (= before (b)), after (b). */
type AroundAB<T> = readonly [before: T, afterSpread: T, afterHot: T];

export interface PayBenchReportInput {
  settings: {
    wallets: number;
    concurrency: number;
    steadyRate: number;
    patWallets: number;
    idempotencyKeys: boolean;
    floorWork: FloorWork;
  };
  machine: { cores: number; node: string; at: string; code: 'dist' | 'sources' };
  history: SeededHistory;
  ceilings: SignerCeiling & {
    hsm: DriveResult;
    ratioBound: SignerRatioBound;
    dbSpread: DriveResult;
    dbHot: DriveResult;
  };
  wakeUps: WakeUpCost;
  placement: WakePlacement;
  /** Each wallet's first payment, and the CPU samples around it. */
  first: { result: DriveResult; before: CpuSample; after: CpuSample };
  /** (a) and (b), and the CPU, threads and metrics around them. */
  spread: DriveResult;
  hot: DriveResult;
  cpu: AroundAB<CpuSample>;
  threads: AroundAB<ServiceThreads>;
  metrics: AroundAB<string>;
  storeCosts: StoreCosts;
  steady: SteadyRun;
  /** (a) and (b) on the signed path, and the CPU samples around them (as `cpu`). */
  signed?: { spread: DriveResult; hot: DriveResult; cpu: AroundAB<CpuSample> };
  /** (d), and the API's metrics around it. */
  capped: { result: DriveResult; before: string; after: string };
  failures: Map<string, number>;
  failureCodes: Map<string, Map<string, number>>;
  damon: SteadyReportInput['damon'];
  probes: SteadyReportInput['probes'];
}

/** The table: the ceilings, then each pay phase with its ratio to them. */
function tableLines(r: PayBenchReportInput, steady: RateResult, steadyFloor: RateResult): string[] {
  const { wallets, concurrency, steadyRate, patWallets, floorWork } = r.settings;
  const { hsm, signerAlone, signerStore, dbSpread, dbHot } = r.ceilings;
  const floorBusy = floorWork.front + floorWork.echo > 0;
  const { header, rule, row } = resultTable(44, 54);
  return [
    header,
    rule,
    row('ceiling: SoftHSM sign via backend (8 loops)', hsm, []),
    row('ceiling: signer process via socket (8 loops)', signerAlone, []),
    ...(signerStore
      ? [
          row('signer via socket, alternating: no store', signerStore.bare, []),
          row('  … with the store, wallet without policy', signerStore.unsigned, [['no store', signerStore.bare]]),
          row('  … with the store, signed policy', signerStore.signed, [['no store', signerStore.bare]]),
        ]
      : []),
    row('ceiling: PG lock+insert, 1,000 keys (16 cl.)', dbSpread, []),
    row('ceiling: PG lock+insert, one key (16 cl.)', dbHot, []),
    row(`first pay of each of ${wallets} wallets (${concurrency} cl.)`, r.first.result, [
      ['HSM', hsm],
      ['signer', signerAlone],
      ['PG', dbSpread],
    ]),
    row(`pay via HTTP, ${wallets} wallets (${concurrency} cl.)`, r.spread, [
      ['HSM', hsm],
      ['signer', signerAlone],
      ['PG', dbSpread],
    ]),
    row(`pay via HTTP, one hot wallet (${concurrency} cl.)`, r.hot, [
      ['HSM', hsm],
      ['signer', signerAlone],
      ['PG hot', dbHot],
    ]),
    ...(r.signed
      ? [
          row(`pay via HTTP, ${wallets} signed wallets (${concurrency} cl.)`, r.signed.spread, [
            ['HSM', hsm],
            ['signer', signerAlone],
            ['PG', dbSpread],
          ]),
          row(`pay via HTTP, one hot signed wallet (${concurrency} cl.)`, r.signed.hot, [
            ['HSM', hsm],
            ['signer', signerAlone],
            ['PG hot', dbHot],
          ]),
        ]
      : []),
    row(`floor: hand-offs, ${floorBusy ? 'busy work' : 'no work'}, ${steadyRate}/s offered`, steadyFloor, []),
    ...(r.steady.floor.withSignature
      ? [row(`floor + a signature's work, ${steadyRate}/s offered`, r.steady.floor.withSignature.result, [])]
      : []),
    row(`pay via HTTP, ${wallets} wallets, ${steadyRate}/s offered`, steady, [
      ['HSM', hsm],
      ['signer', signerAlone],
      ['PG', dbSpread],
    ]),
    row(`agent PAT, daily cap, ${patWallets} wallets (${concurrency} cl.)`, r.capped.result, [
      ['HSM', hsm],
      ['signer', signerAlone],
      ['PG hot', dbHot],
    ]),
  ];
}

/** The whole report, line by line (the caller joins them with newlines). */
export function payBenchReport(r: PayBenchReportInput): string[] {
  const { steadyRate } = r.settings;
  const { hsm, signerAlone, signerCpuPerSign, ratioBound } = r.ceilings;
  const { spread, hot, wakeUps, placement, signed: signedPhases } = r;
  const [cpuBefore, cpuAfter, cpuAfterHot] = r.cpu;
  const [metricsBeforeSpread, metricsAfterSpread, metricsAfterHot] = r.metrics;
  const { steady, metrics, metricsBefore: metricsBeforeSteady } = r.steady;
  const { cpuBefore: cpuBeforeSteady, cpuAfter: cpuAfterSteady } = r.steady;
  const avgMs = (name: string, labels: string) => averageMs(metrics, name, labels);
  const breakdown = `inside the API, per pay on average: decision ${avgMs('treasury_db_transaction_duration_seconds', 'operation="pay"')} ms, write of the signature ${avgMs('treasury_db_transaction_duration_seconds', 'operation="pay_record"')} ms, signer call ${avgMs('treasury_signer_call_duration_seconds', 'method="sign_transfer_authorization"')} ms; whole request ${avgMs('treasury_http_request_duration_seconds', 'method="POST",route="/v1/wallets/:id/pay"')} ms (all phases; payments per statement: the per-phase line)`;
  const phasesLine = `per phase: ${[phaseLine('(a)', metricsBeforeSpread, metricsAfterSpread, spread.ops), phaseLine('(b)', metricsAfterSpread, metricsAfterHot, hot.ops), phaseLine('(c)', metricsBeforeSteady, metrics, steady.ops), phaseLine('(d)', r.capped.before, r.capped.after, r.capped.result.ops)].join('; ')}`;
  const perSteadyPay = (k: Exclude<keyof CpuSample, 'pg' | 'kernel'>) =>
    (((cpuAfterSteady[k] - cpuBeforeSteady[k]) / steady.ops) * 1e6).toFixed(0);
  const perPay = (k: Exclude<keyof CpuSample, 'pg' | 'kernel'>) =>
    (((cpuAfter[k] - cpuBefore[k]) / spread.ops) * 1e6).toFixed(0);
  const rest = ((beyondServices(cpuBefore, cpuAfter) / spread.ops) * 1e6).toFixed(0);
  const perHotPay = (k: Exclude<keyof CpuSample, 'pg' | 'kernel'>) =>
    (((cpuAfterHot[k] - cpuAfter[k]) / hot.ops) * 1e6).toFixed(0);
  const restHot = ((beyondServices(cpuAfter, cpuAfterHot) / hot.ops) * 1e6).toFixed(0);
  /** Share of the two cores' time the hypervisor took between two samples. */
  const stealShare = (before: CpuSample, after: CpuSample, seconds: number) =>
    (after.steal - before.steal) / seconds / 2;
  const [stolenA, stolenC] = [
    stealShare(cpuBefore, cpuAfter, spread.seconds),
    stealShare(cpuBeforeSteady, cpuAfterSteady, steady.seconds),
  ];
  const stolen = Math.max(stolenA, stolenC);
  // Steal above a few percent: the vCPUs waited for the host; per-process CPU then counts some of that wait
  // (so "the rest" can come out negative), and throughput and ceilings move from run to run.
  const stealWarning =
    stolen > 0.05
      ? `note: the hypervisor took ${(stolen * 100).toFixed(0)} % of this machine's CPU time in (a) or (c); this run's figures are not comparable with a quiet run's`
      : '';
  const steadyMachinePerPay = ((cpuAfterSteady.machine - cpuBeforeSteady.machine) / steady.ops) * 1e6;
  const saturatedMachinePerPay = ((cpuAfter.machine - cpuBefore.machine) / spread.ops) * 1e6;
  const wakeUpLine = `hand-offs on this machine (./support/wake-up-cost.ts: a 200-byte message and its echo between two idle processes, machine CPU per round trip): ${wakeUps.backToBackMicros.toFixed(0)} µs back to back, ${wakeUps.pacedMicros.toFixed(0)} µs at ${steadyRate}/s (${(wakeUps.pacedMicros / wakeUps.backToBackMicros).toFixed(1)}×). A payment is handed over six to eight times; machine CPU per pay: ${saturatedMachinePerPay.toFixed(0)} µs in (a), ${steadyMachinePerPay.toFixed(0)} µs in (c) (${(steadyMachinePerPay / saturatedMachinePerPay).toFixed(1)}×)`;
  const postgresLine = `PostgreSQL's processes per pay, µs (what "the rest" above holds): in (a) ${postgresShare(cpuBefore, cpuAfter, spread.ops)}; in (c) ${postgresShare(cpuBeforeSteady, cpuAfterSteady, steady.ops)}`;
  const { before: cpuBeforeFirst, after: cpuAfterFirst, result: firstPayments } = r.first;
  const perFirstPay = (k: 'api' | 'signer') =>
    (((cpuAfterFirst[k] - cpuBeforeFirst[k]) / firstPayments.ops) * 1e6).toFixed(0);
  const firstLine = `CPU per first payment of a wallet, µs: API ${perFirstPay('api')}, signer ${perFirstPay('signer')}; ${postgresShare(cpuBeforeFirst, cpuAfterFirst, firstPayments.ops)}; machine total ${(((cpuAfterFirst.machine - cpuBeforeFirst.machine) / firstPayments.ops) * 1e6).toFixed(0)}`;
  const cpuLine = `signer process alone: ${signerCpuPerSign.toFixed(0)} µs CPU per signature. CPU per pay in (a), µs: API ${perPay('api')}, signer ${perPay('signer')}, load generator ${perPay('self')}, PostgreSQL and the rest ${rest}; machine total ${perPay('machine')} (2 cores busy = ${(2e6 / rate(spread)).toFixed(0)}), ${(stolenA * 100).toFixed(0)}% stolen by the hypervisor; in (b): API ${perHotPay('api')}, signer ${perHotPay('signer')}, load generator ${perHotPay('self')}, PostgreSQL and the rest ${restHot}; machine total ${perHotPay('machine')}; in (c): API ${perSteadyPay('api')}, signer ${perSteadyPay('signer')}, load generator ${perSteadyPay('self')}, machine total ${perSteadyPay('machine')}, ${(((cpuAfterSteady.machine - cpuBeforeSteady.machine) / steady.seconds / 2) * 100).toFixed(0)}% busy, ${(stolenC * 100).toFixed(0)}% stolen by the hypervisor`;
  // Each service's main thread apart from its other threads (the signer's HSM threads among them): CPU, sleeps
  // (each one a wake-up some other thread or process must make) and preemptions a payment (./support/thread-switches.ts).
  const [threadsBefore, threadsAfter, threadsAfterHot] = r.threads;
  const threadPhases = [
    ['(a)', threadsBefore, threadsAfter, spread.ops],
    ['(b)', threadsAfter, threadsAfterHot, hot.ops],
    ['(c)', r.steady.threadsBefore, r.steady.threadsAfter, steady.ops],
  ] as const;
  const threadLines = threadPhases.flatMap(([label, before, after, ops]) => {
    const parts = (['api', 'signer'] as const)
      .map((k) => threadsLine(k === 'api' ? 'API' : 'signer', threadsPerOp(before[k], after[k], ops)))
      .filter(Boolean);
    return parts.length > 0 ? [`  ${label}: ${parts.join('; ')}`] : [];
  });
  /** The signed phases' CPU a payment by process, as (a)'s and (b)'s above: where the signer's second check costs. */
  const perPhasePay = (before: CpuSample, after: CpuSample, ops: number) => {
    const p = partsPerPay(before, after, ops);
    const restOf = ((beyondServices(before, after) / ops) * 1e6).toFixed(0);
    return `API ${p.front.toFixed(0)}, signer ${p.hop.toFixed(0)}, PostgreSQL and the rest ${restOf}; machine total ${p.machine.toFixed(0)}`;
  };
  const signedCpuLine = signedPhases
    ? `CPU per pay on the signed path, µs: in (a, signed): ${perPhasePay(signedPhases.cpu[0], signedPhases.cpu[1], signedPhases.spread.ops)}; in (b, signed): ${perPhasePay(signedPhases.cpu[1], signedPhases.cpu[2], signedPhases.hot.ops)}`
    : '';
  const gcInSteady = gcBetween(metricsBeforeSteady, metrics, steady.ops);
  const gcInSaturation = gcBetween(metricsBeforeSpread, metricsAfterHot, spread.ops + hot.ops);
  const { machine, history } = r;
  return [
    '',
    `Treasury pay benchmark — ${machine.cores} cores, Node ${machine.node}, ${machine.at}`,
    `the signer and the API run ${machine.code === 'dist' ? 'compiled (dist/, as production runs them)' : 'from the TypeScript sources through tsx (no current build: `npm run build` for the compiled code production runs; BENCH_CODE)'}`,
    `database history before measuring: ${history.authorizations.toLocaleString('en-US')} past payments, ${history.auditEvents.toLocaleString('en-US')} audit rows, ${history.spendWindows.toLocaleString('en-US')} past spend windows (BENCH_HISTORY)`,
    `each payment ${r.settings.idempotencyKeys ? 'under an Idempotency-Key of its own, as the SDK sends (BENCH_IDEMPOTENCY_KEYS=0: none)' : 'without an Idempotency-Key (BENCH_IDEMPOTENCY_KEYS=0)'}`,
    '',
    ...tableLines(r, steady, r.steady.floor.result),
    '',
    ...(stealWarning ? [stealWarning, ''] : []),
    ...storeCostLines(r.storeCosts),
    breakdown,
    phasesLine,
    cpuLine,
    ...(threadLines.length > 0
      ? [
          'by thread, a payment (./support/thread-switches.ts; a sleep is a wake-up someone else makes):',
          ...threadLines,
        ]
      : []),
    ...(signedCpuLine ? [signedCpuLine] : []),
    signerRatioBoundLine(ratioBound, rate(signerAlone) / rate(hsm), signerCpuPerSign),
    payRatioBoundLine(
      payRatioBound(r.steady.floor.atSaturation, ratioBound, rate(hsm), machine.cores),
      [
        ['(a)', rate(spread) / rate(hsm)],
        ['(b)', rate(hot) / rate(hsm)],
        ...(signedPhases
          ? ([
              ['(a, signed)', rate(signedPhases.spread) / rate(hsm)],
              ['(b, signed)', rate(signedPhases.hot) / rate(hsm)],
            ] as const)
          : []),
      ],
      { label: '(a)', micros: partsPerPay(cpuBefore, cpuAfter, spread.ops), floor: r.steady.floor.atPayRate },
    ),
    firstLine,
    wakeUpLine,
    `wake placement (./support/wake-placement.ts: a process woken by a socket write while the writer runs on for 1 ms, the other core idle): on the writer's core in ${(placement.onWritersCore * 100).toFixed(0)} % of ${placement.wakes} wake-ups; it started p50 ${placement.p50Micros.toFixed(0)} µs, p90 ${placement.p90Micros.toFixed(0)} µs after the write`,
    postgresLine,
    ...steadyReportLines({ run: r.steady, floorWork: r.settings.floorWork, damon: r.damon, probes: r.probes }),
    `API garbage collection in (c): ${gcInSteady}; in (a) and (b): ${gcInSaturation}`,
    ...failureLines(r.failures, r.failureCodes),
    '',
  ];
}
