/**
 * The gate against the real platform (HTTP API, PostgreSQL): an `mpp` seller registered with an OpenAPI
 * document and an origin, read by a gate through its gate PAT.
 * - until the seller proves it owns the origin (/.well-known/xx-verification.txt), the gate forwards nothing;
 * - an operation ingested without `x-price-usd` is unpriced, not free: the gate answers 404
 *   `gate_endpoint_not_priced` and the origin never sees it, while `x-price-usd: "0"` is free by choice;
 * - once the seller prices it, it is sold at that price, and a refresh of a document that still names no price
 *   leaves the seller's price alone.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { useTestTreasury } from '../../support/api-harness.js';
import { provePayTo } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { startTestGate, type TestGate } from './gate-fakes.js';

const DOCUMENT = {
  openapi: '3.1.0',
  paths: {
    '/reports/{id}': { get: { operationId: 'report', 'x-price-usd': '0.05' } },
    '/export': { get: { operationId: 'export' } },
    '/status': { get: { operationId: 'status', 'x-price-usd': '0' } },
  },
};

/** The seller's origin: its OpenAPI document, its verification token once set, and a record of what it served. */
async function startSellerOrigin() {
  const state = { url: '', token: '', served: [] as string[] };
  const server = http.createServer((req, res) => {
    if (req.url === '/openapi.json') return void res.end(JSON.stringify(DOCUMENT));
    if (req.url === '/.well-known/xx-verification.txt') return void res.end(state.token);
    state.served.push(`${req.method} ${req.url}`);
    res.end('served');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { state, stop, server };
}

describe('gate on the platform: verified origins, unpriced operations', function () {
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
    origin.server.closeAllConnections();
    await Promise.all([origin.stop(), fakes.facilitator.stop(), fakes.platform.stop()]);
  });

  it('forwards nothing before the origin is verified; an ingested operation without a price is not served', async () => {
    const me = await signInWithNewKey(t);
    const created = await t.request('POST', '/v1/sellers', {
      token: me.session,
      body: {
        name: 'Reports',
        protocol: 'mpp',
        origin: origin.state.url,
        openapi_url: `${origin.state.url}/openapi.json`,
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const seller = created.body as { seller_id: string; slug: string; pat: string };
    await provePayTo(t, me.session, seller.seller_id, privateKeyToAccount(generatePrivateKey()));
    const gatePat = (await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'gate' } })).body.pat;
    gate = await startTestGate({ url: t.baseUrl }, { GATE_TOKEN: gatePat, FACILITATOR_URL: fakes.facilitator.url });
    const at = (path: string) => fetch(`${gate!.url}/${seller.slug}${path}`);

    const early = await at('/status');
    assert.equal(early.status, 502, 'an unverified origin receives nothing');
    assert.equal(((await early.json()) as { error_code: string }).error_code, 'gate_origin_refused');
    assert.deepEqual(origin.state.served, []);

    const route = `/v1/sellers/${seller.seller_id}/verify`;
    origin.state.token = (await t.request('GET', route, { token: seller.pat })).body.token;
    assert.equal((await t.request('POST', route, { token: seller.pat })).status, 200);
    await gate.app.catalogue.refreshNow();

    assert.equal((await at('/status')).status, 200, '"0" in the document is free by choice');
    const unpriced = await at('/export');
    assert.equal(unpriced.status, 404);
    assert.equal(((await unpriced.json()) as { error_code: string }).error_code, 'gate_endpoint_not_priced');
    assert.deepEqual(origin.state.served, ['GET /status'], 'the unpriced operation never reached the origin');

    const endpoints = (await t.request('GET', `/v1/sellers/${seller.seller_id}/endpoints`, { token: seller.pat })).body
      .endpoints as Array<{ endpoint_id: string; path: string; priced: boolean }>;
    const exportEndpoint = endpoints.find((e) => e.path === '/export')!;
    assert.equal(exportEndpoint.priced, false);
    const patch = await t.request('PATCH', `/v1/sellers/${seller.seller_id}/endpoints/${exportEndpoint.endpoint_id}`, {
      token: seller.pat,
      body: { price: '0.02' },
    });
    assert.equal(patch.status, 200, JSON.stringify(patch.body));
    assert.equal(patch.body.priced, true);
    await t.request('POST', `/v1/sellers/${seller.seller_id}/refresh`, { token: seller.pat });
    await gate.app.catalogue.refreshNow();
    const priced = await at('/export');
    assert.equal(priced.status, 402);
    assert.equal(((await priced.json()) as PaymentRequired).accepts[0]!.amount, '20000', "the seller's price is kept");
  });
});
