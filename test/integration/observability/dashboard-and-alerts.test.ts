/**
 * The Grafana dashboard (ops/grafana/treasury-overview.json) and the alert rules (ops/prometheus/treasury-alerts.yml)
 * hold against a real Prometheus (docs/operations.md, "Metrics and what to scrape"); that each names only
 * registered metrics and labels is test/unit/ops/grafana-dashboard.test.ts's:
 * - every panel query selects `job` and `instance` through the dashboard's variables;
 * - with Debian's `prometheus` and `promtool` on the PATH (CI installs them): the rules pass `promtool check rules`,
 *   and a real Prometheus that scraped the API and the signer answers every panel's query without error, with both
 *   targets up. Without them those two checks are skipped, saying so.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freeLoopbackPort } from '../../../ops/net/free-loopback-port.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const DASHBOARD = JSON.parse(fs.readFileSync(path.join(ROOT, 'ops/grafana/treasury-overview.json'), 'utf8'));
const ALERTS = fs.readFileSync(path.join(ROOT, 'ops/prometheus/treasury-alerts.yml'), 'utf8');

/** Every panel query of the dashboard, with its panel's title. */
function panelQueries(): Array<{ title: string; expr: string }> {
  const out: Array<{ title: string; expr: string }> = [];
  const walk = (node: unknown, title: string) => {
    if (Array.isArray(node)) for (const n of node) walk(n, title);
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      const here = typeof o.title === 'string' ? o.title : title;
      if (typeof o.expr === 'string') out.push({ title: here, expr: o.expr });
      for (const [k, v] of Object.entries(o)) if (k !== 'templating') walk(v, here);
    }
  };
  walk(DASHBOARD.panels, '');
  return out;
}

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

describe('the dashboard and the alert rules against what the processes export', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let signerMetricsPort: number;

  before(async () => {
    signerMetricsPort = await freeLoopbackPort();
    t = await startTestTreasury({ signerEnv: { TREASURY_SIGNER_METRICS_PORT: String(signerMetricsPort) } });
  });
  after(async () => {
    await t?.stop();
  });

  it('selects job and instance through the dashboard variables in every panel query', () => {
    const names = DASHBOARD.templating.list.map((v: { name: string }) => v.name);
    assert.ok(names.includes('job') && names.includes('instance'), names.join(', '));
    for (const { title, expr } of panelQueries()) {
      const selectors = [...expr.matchAll(/treasury_[a-z0-9_]+(\{[^}]*\})?/g)];
      for (const s of selectors) assert.match(s[1] ?? '', /job=~"\$job", instance=~"\$instance"/, `${title}: ${s[0]}`);
    }
  });

  it('passes promtool check rules, and has an alert for a target that is down', function () {
    assert.match(ALERTS, /expr: up\{job=~"treasury-\.\*"\} == 0/);
    if (!has('promtool')) this.skip();
    const run = spawnSync('promtool', ['check', 'rules', path.join(ROOT, 'ops/prometheus/treasury-alerts.yml')], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stdout + run.stderr);
  });

  it('a real Prometheus scraping the API and the signer answers every panel query, both targets up', async function () {
    if (!has('prometheus')) this.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-prometheus-'));
    const port = await freeLoopbackPort();
    const apiTarget = new URL(t.baseUrl).host;
    fs.writeFileSync(
      path.join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        'rule_files: [' + JSON.stringify(path.join(ROOT, 'ops/prometheus/treasury-alerts.yml')) + ']',
        'scrape_configs:',
        `  - { job_name: treasury-api, static_configs: [{ targets: ["${apiTarget}"] }] }`,
        `  - { job_name: treasury-signer, static_configs: [{ targets: ["127.0.0.1:${signerMetricsPort}"] }] }`,
      ].join('\n'),
    );
    const prometheus: ChildProcess = spawn(
      'prometheus',
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    const query = async (expr: string) => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expr)}`);
      return (await res.json()) as {
        status: string;
        error?: string;
        data?: { result: Array<{ value: [number, string] }> };
      };
    };
    try {
      let up: number[] = [];
      for (let i = 0; i < 120 && up.filter((v) => v === 1).length < 2; i++) {
        await new Promise((r) => setTimeout(r, 500));
        up = await query('up')
          .then((r) => (r.data?.result ?? []).map((s) => Number(s.value[1])))
          .catch(() => []);
      }
      assert.deepEqual(up, [1, 1], 'the API and the signer are scraped and up');
      for (const { title, expr } of panelQueries()) {
        const concrete = expr
          .replaceAll('$__rate_interval', '1m')
          .replaceAll('"$job"', '".*"')
          .replaceAll('"$instance"', '".*"');
        const r = await query(concrete);
        assert.equal(r.status, 'success', `${title}: ${r.error ?? ''} (${concrete})`);
      }
    } finally {
      prometheus.kill('SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
