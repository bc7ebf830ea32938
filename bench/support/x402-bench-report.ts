/**
 * The markdown report of `bench/x402-middleware-bench.ts`: one row per alternated variant (requests/s, latency,
 * errors, server CPU per request over the whole alternated stretch and its range over the variant's slices) and
 * each row's ratio to the side it is compared with in the same alternation: x402Koa to @x402/express (402, paid,
 * free), the gate to x402Koa's paid row — of the sums, and the median and range of the per-round ratios (the
 * two slices of a round are next to each other in time). Pure: it formats what it is given.
 *
 * Limits: a ratio needs both sides in the same run; a side without a successful request reads "n/a".
 */
import type { AlternatedVariant } from './x402-alternating-slices.js';
import { percentile, rate } from './x402-bench-load.js';

/** The goals: the 402 path 1.2× and the paid path 1.5× @x402/express's rate; the gate 0.8× x402Koa's paid rate. */
export const TARGET = { '402': 1.2, paid: 1.5, gate: 0.8 } as const;

export interface ReportRow extends AlternatedVariant {
  /** The label of the row this one is compared with, and the goal, if any. */
  against?: string;
  goal?: number;
}

function ratioCell(r: ReportRow, byLabel: Map<string, ReportRow>): string {
  if (!r.against) return '—';
  const base = byLabel.get(r.against);
  if (!base) return `— (no ${r.against} row in this run)`;
  const ratio = rate(r.result) / rate(base.result);
  const cpuRatio = base.cpuUsPerRequest / r.cpuUsPerRequest;
  if (!Number.isFinite(ratio) || !Number.isFinite(cpuRatio)) return 'n/a (no successful requests on one side)';
  const goal =
    r.goal === undefined ? '(context, no target)' : `goal ≥ ${r.goal}×: ${ratio >= r.goal ? 'met' : 'MISSED'}`;
  const rounds = perRoundRatios(r, base);
  const spread = rounds.length
    ? `; per round median ${median(rounds).toFixed(2)}× (${Math.min(...rounds).toFixed(2)}–${Math.max(...rounds).toFixed(2)})`
    : '';
  return `${ratio.toFixed(2)}× of ${base.label.replace(/^.*: /, '')} (CPU ${cpuRatio.toFixed(2)}×)${spread}, ${goal}`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/**
 * The rate ratio of `r` to `base` in each round both ran a slice in: two slices next to each other in time, so a
 * slow stretch of the machine weighs on one round's ratio instead of on one side's sum.
 */
function perRoundRatios(r: ReportRow, base: ReportRow): number[] {
  const baseRate = new Map(base.slices.map((s) => [s.round, s.requests / s.seconds]));
  return r.slices
    .filter((s) => baseRate.has(s.round))
    .map((s) => s.requests / s.seconds / baseRate.get(s.round)!)
    .filter(Number.isFinite);
}

const range = (xs: number[]) => (xs.length ? `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}` : '—');

export function reportTable(rows: ReportRow[]): string[] {
  const byLabel = new Map(rows.map((r) => [r.label, r]));
  const cols = [31, 10, 8, 8, 7, 10, 13, 100];
  const cell = (s: string, i: number, right = true) => ` ${right ? s.padStart(cols[i]!) : s.padEnd(cols[i]!)} `;
  const header = ['case', 'requests/s', 'p50 ms', 'p99 ms', 'errors', 'CPU µs/req', 'per slice', 'ratio'];
  const row = (r: ReportRow) =>
    '|' +
    [
      cell(r.label, 0, false),
      cell(rate(r.result).toFixed(0), 1),
      cell(percentile(r.result.latenciesMs, 50).toFixed(2), 2),
      cell(percentile(r.result.latenciesMs, 99).toFixed(2), 3),
      cell(String(r.result.errors), 4),
      cell(r.cpuUsPerRequest.toFixed(0), 5),
      cell(range(r.slices.map((s) => s.serverCpuUsPerRequest)), 6),
      cell(ratioCell(r, byLabel), 7, false),
    ].join('|') +
    '|';
  return [
    '|' + header.map((h, i) => cell(h, i, i === 0 || i === 7)).join('|') + '|',
    '|' + cols.map((w) => '-'.repeat(w + 2)).join('|') + '|',
    ...rows.map(row),
  ];
}

/** Per-variant medians of the slice diagnostics: what the server and the machine did around its requests. */
export function sliceDiagnostics(rows: ReportRow[]): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
  return rows.map((r) => {
    const s = r.slices;
    const helper =
      r.helperCpuUsPerRequest === undefined
        ? ''
        : `, its origin ${median(s.map((x) => x.helperCpuUsPerRequest ?? NaN)).toFixed(0)} µs CPU per request`;
    return `- ${r.label.trim()}: ${s.length} slices; medians: server ${median(s.map((x) => x.serverCpuUsPerRequest)).toFixed(0)} µs CPU and ${median(s.map((x) => x.switchesPerRequest)).toFixed(2)} context switches per request${helper}, load generator ${median(s.map((x) => x.loadGeneratorCpuUsPerRequest)).toFixed(0)} µs per request, machine busy ${pct(median(s.map((x) => x.machineBusy)))} (other processes ${pct(median(s.map((x) => x.othersBusy)))}), steal ${pct(median(s.map((x) => x.machineSteal)))}`;
  });
}
