/**
 * The gate's uptime counts in memory and their reporter: hourly buckets per endpoint, bounded; a report the
 * platform could not take (network, 5xx) is kept for the next round, one it refused (4xx) is dropped.
 */
import assert from 'node:assert/strict';
import { UptimeBuckets } from '../../../src/gate/uptime-buckets.js';
import { UptimeReporter } from '../../../src/gate/uptime-reporter.js';
import type { FetchLike } from '../../../src/x402/bounded-fetch.js';

const EP = 'ep_aaaaaaaaaaaaaaaaaaaaaaaa';
const silent = { debug() {}, info() {}, warn() {}, error() {} };

function reporterWith(buckets: UptimeBuckets, statuses: number[]) {
  const sent: unknown[] = [];
  const fetch: FetchLike = async (_url, init) => {
    sent.push(JSON.parse(String(init?.body)));
    const status = statuses.shift() ?? 200;
    if (status === 0) throw new Error('connection refused');
    return new Response(JSON.stringify({ results: [] }), { status });
  };
  const reporter = new UptimeReporter(buckets, {
    apiUrl: 'http://127.0.0.1:1',
    token: 'xx_pat_x',
    fetch,
    timeoutMs: 1000,
    intervalMs: 0,
    logger: silent,
  });
  return { reporter, sent };
}

describe('gate uptime buckets and reporter (unit)', () => {
  it('counts per endpoint and UTC hour, and drops (counted) past its bound', () => {
    let now = Date.UTC(2026, 10, 29, 13, 59, 59);
    const buckets = new UptimeBuckets(() => now, 2);
    buckets.record(EP, true);
    buckets.record(EP, false);
    now += 1000; // the next hour
    buckets.record(EP, true);
    buckets.record('ep_bbbbbbbbbbbbbbbbbbbbbbbb', true);
    assert.equal(buckets.dropped, 1);
    assert.deepEqual(buckets.take(), [
      { endpoint_id: EP, hour: '2026-11-29T13:00:00.000Z', answered: 1, failed: 1 },
      { endpoint_id: EP, hour: '2026-11-29T14:00:00.000Z', answered: 1, failed: 0 },
    ]);
  });

  it('keeps a report the platform could not take, and drops one it refused', async () => {
    const buckets = new UptimeBuckets();
    buckets.record(EP, true);
    const { reporter, sent } = reporterWith(buckets, [0, 503, 400]);
    await reporter.flush();
    assert.equal(buckets.size, 1, 'kept after a network failure');
    await reporter.flush();
    assert.equal(buckets.size, 1, 'kept after a 5xx');
    buckets.record(EP, false);
    await reporter.flush();
    assert.equal(buckets.size, 0, 'a 4xx is final');
    assert.equal(sent.length, 3);
    assert.deepEqual((sent[2] as { buckets: Array<{ answered: number; failed: number }> }).buckets[0], {
      endpoint_id: EP,
      hour: (sent[2] as { buckets: Array<{ hour: string }> }).buckets[0]!.hour,
      answered: 1,
      failed: 1,
    });
  });
});
