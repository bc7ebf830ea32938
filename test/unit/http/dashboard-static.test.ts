/**
 * The dashboard's static serving (src/api/http/dashboard-static.ts) on its own, over HTTP: a missing build
 * answers 503 `dashboard_not_built` (with the security headers still set); every non-asset path is the page;
 * an asset path is served only from inside the asset folder; other methods fall through. And the config's
 * default dashboard URL: the API's own /dashboard on its public origin.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import pino from 'pino';
import { dashboardStatic, DASHBOARD_CSP } from '../../../src/api/http/dashboard-static.js';
import { errorHandler } from '../../../src/api/http/middleware/error-handler.js';
import { requestContext } from '../../../src/api/http/middleware/request-context.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { loadAppConfig } from '../../../src/api/config/app-config.js';

async function serve(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const log = pino({ level: 'silent' });
  const metrics = createTreasuryMetrics();
  const app = new Koa();
  app.use(requestContext(log, metrics));
  app.use(errorHandler(log, metrics));
  app.use(dashboardStatic({ dir }));
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('dashboard static serving', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-static-'));
  const built = path.join(root, 'built');
  const empty = path.join(root, 'empty');
  before(() => {
    fs.mkdirSync(path.join(built, 'assets'), { recursive: true });
    fs.mkdirSync(empty);
    fs.writeFileSync(path.join(built, 'index.html'), '<!doctype html><title>t</title>');
    fs.writeFileSync(path.join(built, 'assets', 'app-abc.js'), 'export {}');
    fs.writeFileSync(path.join(root, 'secret.txt'), 'not for the web');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('answers 503 dashboard_not_built with the security headers when nothing is built', async () => {
    const s = await serve(empty);
    try {
      const res = await fetch(`${s.url}/dashboard/settings/pats/pat_1`);
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('content-security-policy'), DASHBOARD_CSP);
      const body = (await res.json()) as { error_code: string; user_message: string; request_id: string };
      assert.equal(body.error_code, 'dashboard_not_built');
      assert.match(body.user_message, /npm run build:dashboard/);
      assert.ok(body.request_id);
    } finally {
      await s.close();
    }
  });

  it('serves the page for every non-asset path, assets only from inside their folder, and lets other paths through', async () => {
    const s = await serve(built);
    try {
      const asset = await fetch(`${s.url}/dashboard/assets/app-abc.js`);
      assert.equal(asset.status, 200);
      assert.equal(asset.headers.get('content-type'), 'text/javascript; charset=utf-8');
      // Every other path: the page (200), or for one under the asset folder a 404 that reveals nothing.
      for (const [p, status] of [
        ['/dashboard/', 200],
        ['/dashboard/cli-handoff', 200],
        ['/dashboard/sellers/sel_1', 200],
        ['/dashboard/..%2Fsecret.txt', 200],
        ['/dashboard/assets/..%2F..%2Fsecret.txt', 404],
        ['/dashboard/assets/%2e%2e%2findex.html', 404],
        ['/dashboard/assets/%00x', 404],
        ['/dashboard/assets/%E0%A4%A', 404],
      ] as const) {
        const res = await fetch(s.url + p);
        assert.equal(res.status, status, p);
        const text = await res.text();
        if (status === 200) assert.equal(text, '<!doctype html><title>t</title>', p);
        else assert.doesNotMatch(text, /not for the web/);
      }
      assert.equal((await fetch(`${s.url}/dashboard/`, { method: 'DELETE' })).status, 404);
      assert.equal((await fetch(`${s.url}/v1/other`)).status, 404);
      assert.equal((await fetch(`${s.url}/dashboardx`)).status, 404);
    } finally {
      await s.close();
    }
  });

  it('defaults TREASURY_DASHBOARD_URL to the public origin’s /dashboard', () => {
    assert.equal(
      loadAppConfig({ TREASURY_PUBLIC_URL: 'https://pay.example.com/' }).dashboardUrl,
      'https://pay.example.com/dashboard',
    );
    assert.equal(loadAppConfig({ TREASURY_PORT: '9000' }).dashboardUrl, 'http://127.0.0.1:9000/dashboard');
    assert.equal(
      loadAppConfig({ TREASURY_DASHBOARD_URL: 'https://dash.example.com/' }).dashboardUrl,
      'https://dash.example.com',
    );
  });
});
