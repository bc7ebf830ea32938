/**
 * Where treasury-api serves Prometheus /metrics (src/api/config/metrics-listener-config.ts), through the real entry
 * point (src/api/main.ts, a process of its own) on loopback, against a real PostgreSQL and SoftHSM signer:
 * - by default on the API's own listener (200), as before;
 * - with TREASURY_METRICS_PORT only on a listener of its own (200 there; its other paths and methods 404), and the
 *   API's own listener answers /metrics — in each spelling its router matches — exactly as a path it does not
 *   serve (404 `not_found`), counted like one;
 * - SIGTERM closes the metrics listener as a step of the ordered shutdown, after the signer client and before the
 *   database pool (scraped while the API drains), and the process exits 0.
 * Production mode's refusal without it: production-mode.test.ts.
 */
import assert from 'node:assert/strict';
import { startApiProcess, type ApiProcess } from '../../support/api-process.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createTestDatabase, freePort, type TestDatabase } from '../../support/test-database.js';

/** A 404 body without the per-request fields. */
async function notFoundBody(res: Response): Promise<unknown> {
  const body = (await res.json()) as Record<string, unknown>;
  delete body.request_id;
  return body;
}

describe('treasury-api: the metrics listener (a real process)', function () {
  this.timeout(120_000);
  let signer: TestSigner;
  let db: TestDatabase;
  const started: ApiProcess[] = [];

  before(async () => {
    signer = await startTestSigner();
    db = await createTestDatabase();
  });
  after(async () => {
    for (const api of started) await api.stop();
    await db?.drop();
    await signer?.stop();
  });

  it('control: without TREASURY_METRICS_PORT /metrics is served on the API listener', async () => {
    const api = await startApiProcess(db, signer);
    started.push(api);
    const res = await fetch(`${api.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^treasury_http_requests_total\{/m);
  });

  it('with TREASURY_METRICS_PORT: 404 on the API listener like any unknown path, 200 on its own; closed in the shutdown', async () => {
    const metricsPort = await freePort();
    const metricsUrl = `http://127.0.0.1:${metricsPort}`;
    const api = await startApiProcess(db, signer, { TREASURY_METRICS_PORT: String(metricsPort) }, { logs: true });
    started.push(api);

    const unknown = await fetch(`${api.url}/no-such-path`);
    assert.equal(unknown.status, 404);
    const expected = await notFoundBody(unknown);
    for (const p of ['/metrics', '/METRICS', '/metrics/']) {
      const res = await fetch(`${api.url}${p}`);
      assert.equal(res.status, 404, p);
      assert.deepEqual(await notFoundBody(res), expected, p);
    }
    assert.equal((await fetch(`${api.url}/metrics`, { method: 'HEAD' })).status, 404);

    const scraped = await fetch(`${metricsUrl}/metrics`);
    assert.equal(scraped.status, 200);
    assert.match(scraped.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await scraped.text();
    // The public probes above were counted as the 404s of paths no route serves (the unknown one and three spellings).
    assert.match(text, /^treasury_http_requests_total\{method="GET",route="unmatched",status="404"\} 4$/m);
    assert.doesNotMatch(text, /route="\/metrics"/);
    assert.match(text, /^treasury_db_pool_max_connections /m);
    for (const p of ['/livez', '/readyz', '/v1/openapi.json', '/metrics/'])
      assert.equal((await fetch(`${metricsUrl}${p}`)).status, 404, p);
    assert.equal((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status, 404);

    const exited = new Promise<number | null>((resolve) => api.child.once('exit', (code) => resolve(code)));
    api.child.kill('SIGTERM');
    assert.equal(await exited, 0, api.logs());
    const lines = api
      .logs()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; step?: string; outcome?: string; position?: number });
    const steps = lines
      .filter((l) => l.msg === 'shutdown step')
      .sort((x, y) => (x.position ?? 0) - (y.position ?? 0))
      .map((l) => l.step);
    const at = steps.indexOf('metrics_listener');
    assert.ok(at > 0, api.logs());
    assert.deepEqual(steps.slice(at - 1, at + 2), ['signer_client', 'metrics_listener', 'database_pool']);
    assert.equal(lines.find((l) => l.step === 'metrics_listener')?.outcome, 'closed');
  });
});
