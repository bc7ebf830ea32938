/**
 * The metric makers the API's, the gate's and the sandbox's metrics are declared with (src/shared/metric-makers.ts): each metric lands on
 * the registry given, with its name, help, labels and buckets as written; a second metric of the same name
 * throws unless `reuseExisting`, which hands back the one already registered.
 */
import assert from 'node:assert/strict';
import { Registry, register as globalRegistry } from 'prom-client';
import { metricMakers } from '../../../src/shared/metric-makers.js';

describe('metricMakers', () => {
  it('registers counters, gauges and histograms on the given registry only, as declared', async () => {
    const registry = new Registry();
    const { counter, gauge, histogram } = metricMakers(registry);
    counter({ name: 'probe_calls_total', help: 'Calls by outcome.', labelNames: ['outcome'] }).inc({ outcome: 'ok' });
    gauge({ name: 'probe_up', help: '1 when up.' }).set(1);
    histogram({ name: 'probe_seconds', help: 'Latency.', labelNames: ['op'], buckets: [0.1, 1] }).observe(
      { op: 'a' },
      0.5,
    );
    const text = await registry.metrics();
    assert.match(
      text,
      /# HELP probe_calls_total Calls by outcome\.\n# TYPE probe_calls_total counter\nprobe_calls_total\{outcome="ok"\} 1/,
    );
    assert.match(text, /# TYPE probe_up gauge\nprobe_up 1/);
    assert.match(text, /probe_seconds_bucket\{le="0\.1",op="a"\} 0\nprobe_seconds_bucket\{le="1",op="a"\} 1/);
    assert.equal(globalRegistry.getSingleMetric('probe_calls_total'), undefined);
  });

  it('refuses a second metric of the same name, unless told to reuse the one registered', () => {
    const registry = new Registry();
    const spec = { name: 'probe_twice_total', help: 'Twice.', labelNames: ['outcome'] as const };
    const first = metricMakers(registry).counter(spec);
    assert.throws(() => metricMakers(registry).counter(spec), /already been registered/);
    assert.equal(metricMakers(registry, { reuseExisting: true }).counter(spec), first);
  });
});
