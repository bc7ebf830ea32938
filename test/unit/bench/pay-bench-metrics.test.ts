/**
 * What pay-bench reads from two scrapes of the API's metrics (bench/support/pay-bench-metrics.ts) and from two CPU
 * samples (bench/support/pay-bench-cpu.ts): only what moved between them, per payment, in the report's words.
 */
import assert from 'node:assert/strict';
import { averageMs, gcBetween, p99Between, phaseLine, seriesValue } from '../../../bench/support/pay-bench-metrics.js';
import { beyondServices, partsPerPay, postgresShare, type CpuSample } from '../../../bench/support/pay-bench-cpu.js';

const histogram = (buckets: Array<[string, number]>, sum: number) =>
  [
    ...buckets.map(([le, n]) => `h_seconds_bucket{le="${le}",method="sign"} ${n}`),
    `h_seconds_sum{method="sign"} ${sum}`,
    `h_seconds_count{method="sign"} ${buckets.at(-1)![1]}`,
  ].join('\n');

const sample = (o: Partial<CpuSample>): CpuSample => ({
  api: 0,
  signer: 0,
  self: 0,
  machine: 0,
  steal: 0,
  iowait: 0,
  pg: {},
  kernel: {},
  ...o,
});

describe('bench pay-bench metrics', () => {
  it('reads a series, and a histogram mean in ms', () => {
    const text = `\nfoo_total{kind="a"} 12\n${histogram([['+Inf', 4]], 0.01)}\n`;
    assert.equal(seriesValue(text, 'foo_total{kind="a"}'), 12);
    assert.equal(seriesValue(text, 'foo_total{kind="b"}'), 0);
    assert.equal(averageMs(text, 'h_seconds', 'method="sign"'), '2.50');
  });

  it('bounds the p99 of what happened between two scrapes only, and says so when there was nothing', () => {
    const before = `\n${histogram(
      [
        ['0.001', 10],
        ['0.01', 10],
        ['+Inf', 10],
      ],
      0.005,
    )}\n`;
    const after = `\n${histogram(
      [
        ['0.001', 100],
        ['0.01', 110],
        ['+Inf', 110],
      ],
      0.205,
    )}\n`;
    assert.equal(p99Between(before, after, 'h_seconds', 'method="sign"'), '≤10 (mean 2.0)');
    assert.equal(p99Between(after, after, 'h_seconds', 'method="sign"'), '≤1 (mean ?)');
  });

  it('splits snapshots and statements per phase, and counts collections per 1,000 payments', () => {
    const scrape = (read: number, remembered: number, gc: number) =>
      `\ntreasury_pay_snapshots_total{source="read"} ${read}\ntreasury_pay_snapshots_total{source="remembered"} ${remembered}\n` +
      `treasury_pay_decision_write_batch_size_sum 40\ntreasury_pay_decision_write_batch_size_count 10\n` +
      `treasury_nodejs_gc_duration_seconds_sum{kind="minor"} ${gc / 100}\ntreasury_nodejs_gc_duration_seconds_count{kind="minor"} ${gc}\n`;
    const line = phaseLine('(a)', scrape(0, 0, 0), scrape(25, 75, 4), 100);
    assert.match(line, /^\(a\): snapshots read 25 %, remembered 75 %; decisions per write statement 0\.00/);
    const readOn = (n: number) => `\ntreasury_pay_snapshots_total{source="velocity_read_on"} ${n}\n`;
    assert.match(
      phaseLine('(b)', scrape(0, 0, 0) + readOn(0), scrape(0, 97, 4) + readOn(3), 100),
      /^\(b\): snapshots read 0 %, remembered 97 %, remembered with its velocity window read on 3\.0 %; decisions/,
    );
    assert.equal(
      gcBetween(scrape(0, 0, 0), scrape(0, 0, 4), 1000).split(', ')[0],
      'minor 4 (40 ms; 4.0 per 1,000 pays)',
    );
  });

  it('sets each part of two CPU samples per payment, and PostgreSQL beside the rest', () => {
    const before = sample({ pg: { backends: 1 }, kernel: { kworker: 0 } });
    const after = sample({
      api: 0.4,
      signer: 0.6,
      self: 0.1,
      machine: 1.5,
      pg: { backends: 1.3 },
      kernel: { kworker: 0.01 },
    });
    const parts = partsPerPay(before, after, 1000);
    assert.deepEqual(Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, Math.round(v)])), {
      front: 400,
      hop: 600,
      postgres: 300,
      load: 100,
      machine: 1500,
    });
    assert.ok(Math.abs(beyondServices(before, after) - 0.4) < 1e-9);
    assert.equal(
      postgresShare(before, after, 1000),
      "PostgreSQL 300 (backends 300), the rest 100 (the kernel's own threads 10)",
    );
  });
});
