/** A Prometheus histogram over a bench phase from two scrapes (bench/support/histogram-delta.ts). */
import assert from 'node:assert/strict';
import { describeHistogram, histogramDelta } from '../../../bench/support/histogram-delta.js';

const scrape = (buckets: Array<[string, number]>, sum: number, count: number) =>
  [
    '# HELP h_seconds a histogram',
    ...buckets.map(([le, n]) => `h_seconds_bucket{le="${le}",method="sign"} ${n}`),
    `h_seconds_sum{method="sign"} ${sum}`,
    `h_seconds_count{method="sign"} ${count}`,
    `h_seconds_bucket{le="0.001",method="other"} 999`,
    '',
  ].join('\n');

describe('bench histogram delta', () => {
  it('counts, averages and bounds the 99th percentile of what happened between two scrapes only', () => {
    const before = scrape(
      [
        ['0.001', 10],
        ['0.01', 10],
        ['0.1', 10],
        ['+Inf', 10],
      ],
      0.005,
      10,
    );
    // 100 more: 90 under 1 ms, 9 under 10 ms, 1 under 100 ms → 99 % within 10 ms.
    const after = scrape(
      [
        ['0.001', 100],
        ['0.01', 109],
        ['0.1', 110],
        ['+Inf', 110],
      ],
      0.005 + 0.2,
      110,
    );
    const h = histogramDelta(before, after, 'h_seconds', 'method="sign"');
    assert.equal(h.count, 100);
    assert.ok(Math.abs(h.meanMs - 2) < 1e-9);
    assert.equal(h.p99BoundMs, 10);
    assert.equal(describeHistogram(h), '100, mean 2.0 ms, p99 ≤ 10.0 ms');
  });

  it('says so when the 99th percentile is past the last finite bucket', () => {
    const after = scrape(
      [
        ['0.001', 0],
        ['0.01', 0],
        ['0.1', 0],
        ['+Inf', 5],
      ],
      5,
      5,
    );
    const h = histogramDelta('', after, 'h_seconds', 'method="sign"');
    assert.equal(h.p99BoundMs, Infinity);
    assert.match(describeHistogram(h), /p99 > last bucket/);
  });
});
