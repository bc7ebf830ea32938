/**
 * OpenAPI ingest: a document served by a local HTTP server becomes endpoints when the seller registers;
 * editing it and calling refresh reports exactly what was added, changed and removed; a second refresh is a
 * no-op; manual endpoints and endpoints with ledger rows are kept. An `x-price-usd` above the bound every USD
 * amount is held to (docs/security-model.md, "Input bounds": 1,000,000,000 USD) leaves the operation unpriced.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { openApiDocHandler } from '../../support/loopback-servers.js';

describe('OpenAPI ingest and refresh (HTTP, PostgreSQL)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  let doc: Record<string, unknown>;
  let server: http.Server;
  let url: string;

  before(async () => {
    t = await startTestTreasury();
    server = http.createServer(openApiDocHandler(() => doc));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/openapi.json`;
  });
  after(async () => {
    server?.close();
    await t?.stop();
  });

  it('ingests at registration and reports the diff on refresh', async () => {
    doc = {
      openapi: '3.1.0',
      paths: {
        '/search': { post: { operationId: 'search', 'x-price-usd': '0.05', 'x-capabilities': ['search.web'] } },
        '/items/{id}': { get: { operationId: 'getItem', 'x-price-usd': '0.01' } },
        '/health': { get: { operationId: 'health' } },
      },
    };
    const { session, address: payer } = await signInWithNewKey(t);
    const seller = (
      await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Docs Co', openapi_url: url } })
    ).body;
    assert.deepEqual(seller.ingest.added.sort(), ['getitem', 'health', 'search']);
    const endpoints = (await t.request('GET', `/v1/sellers/${seller.seller_id}/endpoints`, { token: seller.pat })).body
      .endpoints;
    const search = endpoints.find((e: { slug: string }) => e.slug === 'search');
    assert.deepEqual(
      [search.method, search.path, search.price, search.capabilities],
      ['POST', '/search', '0.05', ['search.web']],
    );
    assert.equal(endpoints.find((e: { slug: string }) => e.slug === 'getitem').path_pattern, '/items/{id}');
    assert.equal(endpoints.find((e: { slug: string }) => e.slug === 'health').price, '0');

    const manual = await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
      token: seller.pat,
      body: { path: '/manual', price: '1' },
    });
    const getItem = endpoints.find((e: { slug: string }) => e.slug === 'getitem');
    await t.request('POST', '/v1/ledger', {
      token: seller.pat,
      body: {
        tx_hash: `0x${randomBytes(32).toString('hex')}`,
        payer,
        amount: '10000',
        network: 'eip155:84532',
        endpoint_id: getItem.endpoint_id,
      },
    });

    doc = {
      openapi: '3.1.0',
      paths: {
        '/search': { post: { operationId: 'search', 'x-price-usd': '0.07', 'x-capabilities': ['search.web'] } },
        '/forecast': { get: { operationId: 'forecast', 'x-price-usd': '0.02' } },
      },
    };
    const refreshed = await t.request('POST', `/v1/sellers/${seller.seller_id}/refresh`, { token: seller.pat });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.deepEqual(
      {
        added: refreshed.body.added,
        changed: refreshed.body.changed,
        removed: refreshed.body.removed,
        kept: refreshed.body.kept_for_ledger,
      },
      { added: ['forecast'], changed: ['search'], removed: ['health'], kept: ['getitem'] },
    );
    const again = await t.request('POST', `/v1/sellers/${seller.seller_id}/refresh`, { token: seller.pat });
    assert.deepEqual([again.body.added, again.body.changed, again.body.removed], [[], [], []], 'refresh is idempotent');
    const after = (
      await t.request('GET', `/v1/sellers/${seller.seller_id}/endpoints`, { token: seller.pat })
    ).body.endpoints
      .map((e: { slug: string }) => e.slug)
      .sort();
    assert.deepEqual(after, ['forecast', 'getitem', manual.body.slug, 'search'].sort());

    doc = { not: 'openapi' } as Record<string, unknown>;
    assert.equal(
      (await t.request('POST', `/v1/sellers/${seller.seller_id}/refresh`, { token: seller.pat })).body.error_code,
      'openapi_invalid',
    );
    await t.request('PATCH', `/v1/sellers/${seller.seller_id}`, {
      token: session,
      body: { openapi_url: url.replace('openapi.json', 'missing.json') },
    });
    assert.equal(
      (await t.request('POST', `/v1/sellers/${seller.seller_id}/refresh`, { token: seller.pat })).body.error_code,
      'openapi_not_found',
    );
  });

  it('an x-price-usd above the 1,000,000,000 USD bound leaves the operation unpriced; the bound itself is a price', async () => {
    doc = {
      openapi: '3.1.0',
      paths: {
        '/at-bound': { get: { operationId: 'atBound', 'x-price-usd': '1000000000' } },
        '/above': { get: { operationId: 'above', 'x-price-usd': '1000000000.000001' } },
        '/far-above': { get: { operationId: 'farAbove', 'x-price-usd': '9000000000000' } },
      },
    };
    const { session } = await signInWithNewKey(t);
    const created = await t.request('POST', '/v1/sellers', {
      token: session,
      body: { name: 'Pricey', openapi_url: url },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const endpoints = (
      await t.request('GET', `/v1/sellers/${created.body.seller_id}/endpoints`, { token: created.body.pat })
    ).body.endpoints as Array<{ slug: string; price: string; priced: boolean }>;
    const bySlug = Object.fromEntries(endpoints.map((e) => [e.slug, [e.price, e.priced]]));
    assert.deepEqual(bySlug, {
      atbound: ['1000000000', true],
      above: ['0', false],
      farabove: ['0', false],
    });
  });
});
