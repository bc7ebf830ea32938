/**
 * ops/grafana/treasury-overview.json and ops/prometheus/treasury-alerts.yml query only metrics the services
 * register, with labels those metrics have: every `treasury_*` name in a panel's or an alert's expression
 * (histogram series `_bucket`/`_sum`/`_count` by their base name) is in the registries of the API, its pool
 * gauges, the signer and the seller middleware, and every label a selector or a `by (…)` names is one of its
 * labels. A renamed metric or label fails here instead of leaving an empty panel or an alert that never fires.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { createSignerMetrics } from '../../../signer/metrics/signer-metrics.js';
import { createKnex } from '../../../src/api/db/knex-client.js';
import { registerPoolMetrics } from '../../../src/api/metrics/register-pool-metrics.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { createX402MiddlewareMetrics } from '../../../src/x402/seller/middleware-metrics.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every metric the services register, with its label names (histograms also have `le`). */
async function registeredMetrics(): Promise<Map<string, Set<string>>> {
  const api = createTreasuryMetrics();
  const knex = createKnex('postgres://nobody@127.0.0.1:1/none', 1);
  registerPoolMetrics(api.registry, knex);
  const registries = [
    api.registry,
    createSignerMetrics().registry,
    createX402MiddlewareMetrics(new Registry()).registry,
  ];
  const out = new Map<string, Set<string>>();
  try {
    for (const registry of registries) {
      for (const metric of await registry.getMetricsAsJSON()) {
        const labels = new Set<string>(['le']);
        for (const v of metric.values as Array<{ labels: Record<string, unknown> }>)
          for (const l of Object.keys(v.labels)) labels.add(l);
        for (const l of (registry.getSingleMetric(metric.name) as unknown as { labelNames?: string[] })?.labelNames ??
          [])
          labels.add(l);
        out.set(metric.name, labels);
      }
    }
  } finally {
    await knex.destroy();
  }
  return out;
}

const baseName = (series: string) => series.replace(/_(bucket|sum|count)$/, '');

/** Labels Prometheus adds to every series at scrape (the dashboard's `job` and `instance` variables select on them). */
const TARGET_LABELS = new Set(['job', 'instance']);

/** The metric names in a PromQL expression, each with the labels its selectors and `by (…)` clauses name. */
function referenced(expr: string): Array<{ metric: string; labels: string[] }> {
  const refs: Array<{ metric: string; labels: string[] }> = [];
  const by = [...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  for (const m of expr.matchAll(/\b(treasury_[a-z0-9_]+)(\{([^}]*)\})?/g)) {
    const selector = m[3] ?? '';
    const labels = [...selector.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)]
      .map((l) => l[1]!)
      .filter((l) => !TARGET_LABELS.has(l));
    refs.push({ metric: baseName(m[1]!), labels: [...labels, ...by] });
  }
  return refs;
}

describe('dashboards and alerts query registered metrics', () => {
  const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, 'ops/grafana/treasury-overview.json'), 'utf8')) as {
    uid: string;
    panels: Array<{ id: number; type: string; title: string; targets?: Array<{ expr: string }> }>;
  };
  const alerts = fs.readFileSync(path.join(ROOT, 'ops/prometheus/treasury-alerts.yml'), 'utf8');

  it('the Grafana dashboard: unique panel ids, a query in every panel, each on a registered metric and its labels', async () => {
    const metrics = await registeredMetrics();
    const ids = dashboard.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
    const graphs = dashboard.panels.filter((p) => p.type !== 'row');
    assert.ok(graphs.length >= 25, `panels: ${graphs.length}`);
    for (const panel of graphs) {
      assert.ok(panel.targets && panel.targets.length > 0, `${panel.title} has a query`);
      for (const { expr } of panel.targets!) {
        const refs = referenced(expr);
        assert.ok(refs.length > 0, `${panel.title}: ${expr} names a treasury metric`);
        for (const { metric, labels } of refs) {
          const known = metrics.get(metric);
          assert.ok(known, `${panel.title}: ${metric} is registered`);
          for (const label of labels) assert.ok(known!.has(label), `${panel.title}: ${metric} has the label ${label}`);
        }
      }
    }
  });

  it('the alerting rules', async () => {
    const metrics = await registeredMetrics();
    const exprs = [...alerts.matchAll(/^\s+expr: (.+)$/gm)].map((m) => m[1]!);
    assert.ok(exprs.length >= 5, `alert expressions: ${exprs.length}`);
    for (const expr of exprs) {
      for (const { metric, labels } of referenced(expr)) {
        const known = metrics.get(metric);
        assert.ok(known, `${expr}: ${metric} is registered`);
        for (const label of labels) assert.ok(known!.has(label), `${expr}: ${metric} has the label ${label}`);
      }
    }
  });

  it('catches a renamed metric or label (the check itself can fail)', () => {
    assert.deepEqual(
      referenced('sum by (le, method) (rate(treasury_signer_call_duration_seconds_bucket{route="/x"}[5m]))'),
      [{ metric: 'treasury_signer_call_duration_seconds', labels: ['route', 'le', 'method'] }],
    );
  });
});
