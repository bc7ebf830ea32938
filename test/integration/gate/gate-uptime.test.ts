/**
 * Uptime as the gate sees it, against the real platform (HTTP API, PostgreSQL): an `mpp` seller with a verified
 * origin, read by a gate through its gate PAT. The gate counts, per endpoint and hour, what the origin answered
 * (below 500) and what it failed (5xx, unreachable); a challenge that never reached the origin counts nothing.
 * Its report lands in `endpoint_uptime_hours` for the endpoint, and a later report adds to the hour.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { useTestTreasury } from '../../support/api-harness.js';
import { provePayTo } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { startTestGate, type TestGate } from './gate-fakes.js';

const DOCUMENT = {
  openapi: '3.1.0',
  paths: {
    '/ok': { get: { operationId: 'ok', 'x-price-usd': '0' } },
    '/broken': { get: { operationId: 'broken', 'x-price-usd': '0' } },
    '/paid': { get: { operationId: 'paid', 'x-price-usd': '0.01' } },
  },
};

async function startSellerOrigin() {
  const state = { url: '', token: '' };
  const server = http.createServer((req, res) => {
    if (req.url === '/openapi.json') return void res.end(JSON.stringify(DOCUMENT));
    if (req.url === '/.well-known/xx-verification.txt') return void res.end(state.token);
    if (req.url === '/broken') {
      res.writeHead(503);
      return void res.end('down');
    }
    res.end('fine');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const stop = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { state, stop };
}

describe('gate: uptime recorded per endpoint and reported to the platform', function () {
  this.timeout(120_000);
  const t = useTestTreasury();
  let origin: Awaited<ReturnType<typeof startSellerOrigin>>;
  let fakes: { facilitator: FakeServer; platform: FakeServer };
  let gate: TestGate | undefined;

  before(async () => {
    origin = await startSellerOrigin();
    fakes = await startFakes();
  });
  after(async () => {
    await gate?.stop();
    await Promise.all([origin.stop(), fakes.facilitator.stop(), fakes.platform.stop()]);
  });

  it("counts what the origin answered and failed, and the platform stores it on the seller's endpoints", async () => {
    const me = await signInWithNewKey(t);
    const created = await t.request('POST', '/v1/sellers', {
      token: me.session,
      body: {
        name: 'Flaky',
        protocol: 'mpp',
        origin: origin.state.url,
        openapi_url: `${origin.state.url}/openapi.json`,
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const seller = created.body as { seller_id: string; slug: string; pat: string };
    await provePayTo(t, me.session, seller.seller_id, privateKeyToAccount(generatePrivateKey()));
    const route = `/v1/sellers/${seller.seller_id}/verify`;
    origin.state.token = (await t.request('GET', route, { token: seller.pat })).body.token;
    assert.equal((await t.request('POST', route, { token: seller.pat })).status, 200);
    const gatePat = (await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'gate' } })).body.pat;
    gate = await startTestGate({ url: t.baseUrl }, { GATE_TOKEN: gatePat, FACILITATOR_URL: fakes.facilitator.url });
    const at = (path: string) => fetch(`${gate!.url}/${seller.slug}${path}`);

    assert.equal((await at('/ok')).status, 200);
    assert.equal((await at('/ok')).status, 200);
    assert.equal((await at('/broken')).status, 503);
    assert.equal((await at('/paid')).status, 402, 'a challenge never reaches the origin: no sample');

    const realApi = gate.app.uptime.reporter;
    const endpoints = (await t.request('GET', `/v1/sellers/${seller.seller_id}/endpoints`, { token: seller.pat })).body
      .endpoints as Array<{ endpoint_id: string; path: string }>;
    const id = (path: string) => endpoints.find((e) => e.path === path)!.endpoint_id;
    assert.equal(gate.app.uptime.buckets.size, 2);
    await realApi.flush();
    assert.equal(gate.app.uptime.buckets.size, 0);

    const rows = (await t.db.knex('endpoint_uptime_hours').whereIn(
      'endpoint_id',
      endpoints.map((e) => e.endpoint_id),
    )) as Array<{
      endpoint_id: string;
      hour: Date;
      answered: number;
      failed: number;
    }>;
    const byId = new Map(rows.map((r) => [r.endpoint_id, r]));
    assert.equal(rows.length, 2, JSON.stringify(rows));
    assert.deepEqual([byId.get(id('/ok'))!.answered, byId.get(id('/ok'))!.failed], [2, 0]);
    assert.deepEqual([byId.get(id('/broken'))!.answered, byId.get(id('/broken'))!.failed], [0, 1]);
    assert.equal(byId.get(id('/ok'))!.hour.getTime() % 3_600_000, 0, 'an hourly bucket');

    // A second report adds to the hour.
    assert.equal((await at('/broken')).status, 503);
    await realApi.flush();
    const again = await t.db
      .knex('endpoint_uptime_hours')
      .where({ endpoint_id: id('/broken') })
      .first();
    assert.equal(again.failed, 2);
  });
});
