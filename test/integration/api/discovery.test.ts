/**
 * The public catalogue (GET /discovery/resources, GET /discovery/search) through the official Bazaar client —
 * `withBazaar(new HTTPFacilitatorClient({ url }))` of @x402/extensions, pointed at the API on loopback — over
 * real sellers (origins verified against loopback servers, pay-to proven, a collection wallet made by the
 * SoftHSM signer) in real PostgreSQL: only active, verified, paid-to-somewhere sellers are listed, with the x402
 * terms a buyer gets; the search matches text literally (`%`, `_`, `\` included); hostile query strings get
 * stable 400 codes; revenue counts verified ledger rows only; the routes are rate limited per address.
 */
import assert from 'node:assert/strict';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { validateDiscoveryExtension, withBazaar } from '@x402/extensions/bazaar';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { discoveryResourcesPageSchema } from '../../../src/shared/api-responses/discovery-responses.js';
import { startTestTreasury, useTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { registerSeller, type ListedSeller } from '../../support/discoverable-seller.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import {
  markLedgerVerifiedForTest,
  provePayTo,
  proveSolanaPayTo,
  solanaPayToKey,
} from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const BASE_SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';

describe('public catalogue: Bazaar discovery served by the platform (official client, HTTP, PostgreSQL)', function () {
  this.timeout(180_000);
  const t = useTestTreasury({ extraEnv: { TREASURY_DISCOVERY_CACHE_MS: '0' } });
  const servers = new LoopbackServers();
  let session: string;
  let weather: ListedSeller;
  let collected: ListedSeller;
  let percent: ListedSeller;
  const absent: ListedSeller[] = [];
  const bazaar = () => withBazaar(new HTTPFacilitatorClient({ url: t.baseUrl })).extensions.bazaar;

  before(async () => {
    session = (await signInWithNewKey(t)).session;
    weather = await registerSeller(t, servers, session, 'Weather Co', {
      endpoints: { 'GET /weather/{city}': '0.01', 'POST /summarize': '0.05' },
    });
    collected = await registerSeller(t, servers, session, 'Collected Jokes', {
      endpoints: { 'GET /joke': '0.002' },
      payout_mode: 'platform_mor',
    });
    // The collection wallet on the catalogue's network, as the seller's paywall gets it.
    const verify = await t.request('POST', '/v1/auth/verify', {
      token: collected.pat,
      body: { network: 'eip155:84532' },
    });
    assert.match(String(verify.body.collect_to), /^0x[0-9a-fA-F]{40}$/, JSON.stringify(verify.body));
    collected.payTo = verify.body.collect_to;
    percent = await registerSeller(t, servers, session, '100% Uptime', { endpoints: { 'GET /status': '0.001' } });
    absent.push(
      await registerSeller(t, servers, session, 'Unverified Weather', {
        endpoints: { 'GET /weather': '0.01' },
        verify: false,
      }),
      await registerSeller(t, servers, session, 'Suspended Weather', { endpoints: { 'GET /weather': '0.01' } }),
      await registerSeller(t, servers, session, 'Unpaid Weather', {
        endpoints: { 'GET /weather': '0.01' },
        prove: false,
      }),
      // Sold through its account's gate, whose public address is not verified: no URL a buyer could call.
      await registerSeller(t, servers, session, 'Gated Weather', {
        endpoints: { 'GET /weather': '0.01' },
        protocol: 'mpp',
      }),
    );
    const suspended = await t.request('POST', `/v1/sellers/${absent[1]!.seller_id}/suspend`, { token: session });
    assert.equal(suspended.body.status, 'suspended');
  });
  after(() => servers.closeAll());

  it('lists every active, verified seller with its x402 terms, and no unverified, suspended, unpaid or gated one', async () => {
    const page = await bazaar().listResources({ limit: 100 });
    assert.equal(page.x402Version, 2);
    // The reply is the documented shape (the schema the OpenAPI document and the CLI use), unchanged by parsing.
    assert.deepEqual(discoveryResourcesPageSchema.parse(page), page);
    const sellers = new Set(page.items.map((i) => (i as any).treasury.seller_id));
    for (const s of [weather, collected, percent]) assert.ok(sellers.has(s.seller_id), `${s.seller_id} listed`);
    for (const s of absent) assert.ok(!sellers.has(s.seller_id), `${s.seller_id} not listed`);
    assert.deepEqual(page.pagination, { limit: 100, offset: 0, total: 4 });

    const city = page.items.find((i) => i.resource === `${weather.origin}/weather/:city`);
    assert.ok(city, JSON.stringify(page.items.map((i) => i.resource)));
    assert.equal(city.type, 'http');
    assert.deepEqual(city.accepts, [
      {
        scheme: 'exact',
        network: 'eip155:84532',
        amount: '10000',
        asset: BASE_SEPOLIA_USDC,
        payTo: weather.payTo,
        maxTimeoutSeconds: 300,
        extra: { name: 'USDC', version: '2' },
      },
    ]);
    assert.equal(city.serviceName, 'Weather Co');
    assert.deepEqual((city.extensions as any).bazaar.info, { input: { type: 'http', method: 'GET' } });
    assert.deepEqual((city as any).treasury, {
      seller_id: weather.seller_id,
      seller_slug: 'weather-co',
      seller_name: 'Weather Co',
      endpoint_slug: (city as any).treasury.endpoint_slug,
      price_usd: '0.01',
      revenue_30d_usd: '0',
      paid_calls_30d: 0,
      origin_verified: true,
    });
    const joke = page.items.find((i) => i.resource === `${collected.origin}/joke`)!;
    assert.equal(
      joke.accepts[0]!.payTo.toLowerCase(),
      collected.payTo.toLowerCase(),
      'a platform_mor seller is paid at its collection wallet',
    );
    assert.equal(joke.accepts[0]!.amount, '2000');
  });

  it('filters by payTo, network, type, scheme and extension, and pages with limit and offset', async () => {
    const mine = await bazaar().listResources({ payTo: weather.payTo.toLowerCase() });
    assert.deepEqual(mine.items.map((i) => i.resource).sort(), [
      `${weather.origin}/summarize`,
      `${weather.origin}/weather/:city`,
    ]);
    assert.equal(mine.pagination.total, 2);
    for (const none of [
      { network: 'eip155:8453' },
      { type: 'mcp' },
      { scheme: 'upto' },
      { extensions: 'sign-in-with-x' },
    ])
      assert.deepEqual((await bazaar().listResources(none)).pagination.total, 0, JSON.stringify(none));
    assert.equal(
      (await bazaar().listResources({ type: 'http', scheme: 'exact', network: 'eip155:84532', extensions: 'bazaar' }))
        .pagination.total,
      4,
    );
    const first = await bazaar().listResources({ limit: 3, offset: 0 });
    const rest = await bazaar().listResources({ limit: 3, offset: 3 });
    assert.equal(first.items.length, 3);
    assert.equal(rest.items.length, 1);
    assert.deepEqual(rest.pagination, { limit: 3, offset: 3, total: 4 });
    const all = [...first.items, ...rest.items].map((i) => i.resource);
    assert.equal(new Set(all).size, 4, 'pages neither repeat nor skip');
    assert.deepEqual((await bazaar().listResources({ offset: 50 })).items, []);
  });

  it('searches as plain text: best matches first, and %, _ and \\ match only themselves', async () => {
    const found = await bazaar().search({ query: 'weather city' });
    assert.equal(found.x402Version, 2);
    assert.equal(found.resources[0]!.resource, `${weather.origin}/weather/:city`, 'both terms match: first');
    assert.ok(found.resources.every((r) => (r as any).treasury.seller_id !== absent[0]!.seller_id));
    const percentHits = await bazaar().search({ query: '%' });
    assert.deepEqual(
      percentHits.resources.map((r) => (r as any).treasury.seller_id),
      [percent.seller_id],
    );
    for (const literal of ['_', '\\', 'we_ther', 'w%r'])
      assert.deepEqual((await bazaar().search({ query: literal })).resources, [], literal);
    assert.deepEqual((await bazaar().search({ query: '天気 ☀' })).resources, []);
    const paged = await bazaar().search({ query: 'weather', limit: 1 });
    assert.equal(paged.resources.length, 1);
    assert.equal(paged.partialResults, true);
    const next = await bazaar().search({ query: 'weather', limit: 1, cursor: paged.pagination!.cursor! });
    assert.equal(next.resources.length, 1);
    assert.notEqual(next.resources[0]!.resource, paged.resources[0]!.resource);
    assert.equal(next.pagination!.cursor, null);
  });

  it('refuses hostile query strings with stable 400 codes', async () => {
    const cases: Array<[string, string]> = [
      [`/discovery/search?query=${'a'.repeat(201)}`, 'discovery_query_invalid'],
      ['/discovery/search', 'discovery_query_invalid'],
      ['/discovery/search?query=', 'discovery_query_invalid'],
      ['/discovery/search?query=%00', 'discovery_query_invalid'],
      ['/discovery/search?query=a%1B%5B31m', 'discovery_query_invalid'],
      ['/discovery/search?query=%E2%80%AEgnp', 'discovery_query_invalid'],
      ['/discovery/search?query=line%0D%0ASet-Cookie', 'discovery_query_invalid'],
      ['/discovery/search?query=x&query=y', 'discovery_query_invalid'],
      ['/discovery/resources?payTo=0xzz', 'discovery_query_invalid'],
      ['/discovery/resources?network=%25', 'discovery_query_invalid'],
      ['/discovery/resources?type=HTTP%00', 'discovery_query_invalid'],
      ['/discovery/resources?evil=1', 'discovery_query_invalid'],
      ['/discovery/resources?limit=-1', 'discovery_page_out_of_range'],
      ['/discovery/resources?limit=0', 'discovery_page_out_of_range'],
      ['/discovery/resources?limit=101', 'discovery_page_out_of_range'],
      ['/discovery/resources?limit=1e3', 'discovery_page_out_of_range'],
      ['/discovery/resources?limit=99999999999999999999', 'discovery_page_out_of_range'],
      ['/discovery/resources?limit=1.5', 'discovery_page_out_of_range'],
      ['/discovery/resources?limit=1&limit=2', 'discovery_page_out_of_range'],
      ['/discovery/resources?offset=-5', 'discovery_page_out_of_range'],
      ['/discovery/resources?offset=10001', 'discovery_page_out_of_range'],
      ['/discovery/search?query=a&cursor=abc', 'discovery_page_out_of_range'],
      ['/discovery/search?query=a&cursor=-1', 'discovery_page_out_of_range'],
    ];
    for (const [path, code] of cases) {
      const res = await t.request('GET', path);
      assert.equal(res.status, 400, `${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error_code, code, path);
    }
    // A lone surrogate cannot travel in a URL: it arrives as U+FFFD, plain text matching nothing.
    const lone = await bazaar().search({ query: '\ud800' });
    assert.deepEqual(lone.resources, []);
    // The official client surfaces the refusal as an error naming the status and code.
    await assert.rejects(bazaar().listResources({ limit: 1000 }), /\(400\).*discovery_page_out_of_range/);
  });

  it("serves the input and output JSON Schemas the seller's OpenAPI document declares, and leaves unusable ones out", async () => {
    const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
    const docs = await registerSeller(t, servers, session, 'Docs Weather', {
      endpoints: {},
      openapi: {
        openapi: '3.1.0',
        components: {
          schemas: {
            Forecast: { type: 'object', properties: { temp: { type: 'number' } }, required: ['temp'] },
            Loop: { type: 'object', properties: { next: { $ref: '#/components/schemas/Loop' } } },
          },
        },
        paths: {
          '/forecast': {
            get: {
              operationId: 'forecast',
              summary: 'Seven-day forecast',
              'x-price-usd': '0.02',
              parameters: [{ name: 'city', in: 'query', required: true, schema: { type: 'string' } }],
              responses: { '200': json({ $ref: '#/components/schemas/Forecast' }) },
            },
          },
          '/ask': {
            post: {
              operationId: 'ask',
              description: 'Ask a question',
              'x-price-usd': '0.05',
              requestBody: json({ type: 'object', properties: { q: { type: 'string' } } }),
              responses: { '200': json({ $ref: '#/components/schemas/Loop' }) },
            },
          },
          '/remote': {
            get: {
              operationId: 'remote',
              summary: 'bad\u0000text',
              'x-price-usd': '0.01',
              responses: { '200': json({ $ref: 'https://schemas.example/remote.json' }) },
            },
          },
        },
      },
    });
    const page = await bazaar().listResources({ payTo: docs.payTo });
    const byPath = new Map(page.items.map((i) => [new URL(i.resource).pathname, i as any]));
    assert.deepEqual([...byPath.keys()].sort(), ['/ask', '/forecast', '/remote']);

    const forecast = byPath.get('/forecast');
    assert.equal(forecast.description, 'Seven-day forecast');
    const bazaarExt = forecast.extensions.bazaar;
    assert.deepEqual(bazaarExt.info, { input: { type: 'http', method: 'GET' }, output: { type: 'json' } });
    assert.deepEqual(bazaarExt.schema.properties.input.properties.queryParams, {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    });
    assert.deepEqual(bazaarExt.schema.properties.output.properties.example, {
      type: 'object',
      properties: { temp: { type: 'number' } },
      required: ['temp'],
    });
    assert.deepEqual(validateDiscoveryExtension(bazaarExt), { valid: true });

    const ask = byPath.get('/ask');
    assert.equal(ask.description, 'Ask a question');
    assert.deepEqual(ask.extensions.bazaar.info, {
      input: { type: 'http', method: 'POST', bodyType: 'json', body: {} },
    });
    assert.deepEqual(ask.extensions.bazaar.schema.properties.input.properties.body, {
      type: 'object',
      properties: { q: { type: 'string' } },
    });
    assert.equal(ask.extensions.bazaar.schema.properties.output, undefined, 'a reference cycle is left out');
    assert.deepEqual(validateDiscoveryExtension(ask.extensions.bazaar), { valid: true });

    const remote = byPath.get('/remote');
    assert.equal(remote.description, 'Docs Weather: GET /remote', 'a description with a NUL is left out');
    assert.equal(remote.extensions.bazaar.schema.properties.output, undefined, 'a remote reference is left out');

    const found = await bazaar().search({ query: 'seven-day' });
    assert.deepEqual(
      found.resources.map((r) => r.resource),
      [forecast.resource],
    );
    // Search reads the description from its own column, which PostgreSQL keeps from `discovery` and no one writes.
    const row = await t.db.knex('endpoints').where({ path: '/forecast' }).first('id', 'discovery_description');
    assert.equal(row.discovery_description, 'Seven-day forecast');
    await assert.rejects(
      t.db.knex('endpoints').where({ id: row.id }).update({ discovery_description: 'forged' }),
      /can only be updated to DEFAULT/,
    );
  });

  it('counts verified ledger rows only: a forged, unverified report moves neither revenue nor paid calls', async () => {
    const endpointId = weather.endpoints['GET /weather/{city}']!;
    const report = (n: number) =>
      t.request('POST', '/v1/ledger', {
        token: weather.pat,
        body: {
          tx_hash: `0x${n.toString(16).padStart(64, '0')}`,
          payer: privateKeyToAccount(generatePrivateKey()).address,
          amount: '10000',
          network: 'eip155:84532',
          endpoint_id: endpointId,
        },
      });
    assert.equal((await report(1)).status, 201);
    assert.equal(await markLedgerVerifiedForTest(t.db.knex, weather.seller_id), 1);
    const forged = await report(2);
    assert.equal(forged.status, 201, JSON.stringify(forged.body));
    assert.equal(forged.body.status, 'pending');
    const page = await bazaar().listResources({ payTo: weather.payTo });
    const city = page.items.find((i) => i.resource.endsWith('/weather/:city')) as any;
    assert.equal(city.treasury.revenue_30d_usd, '0.01');
    assert.equal(city.treasury.paid_calls_30d, 1);
    const other = page.items.find((i) => i.resource.endsWith('/summarize')) as any;
    assert.equal(other.treasury.paid_calls_30d, 0, 'revenue is per endpoint');
  });

  it('pays an EVM offer to an EVM address: a Solana pay-to proven first is not the listing payee', async () => {
    const both = await registerSeller(t, servers, session, 'Solana First', {
      endpoints: { 'GET /first': '0.01' },
      prove: false,
    });
    await proveSolanaPayTo(t, session, both.seller_id, solanaPayToKey());
    const evm = privateKeyToAccount(generatePrivateKey());
    await provePayTo(t, session, both.seller_id, evm);
    const page = await bazaar().listResources({ limit: 100 });
    const first = page.items.find((i) => i.resource === `${both.origin}/first`);
    assert.ok(first, 'listed');
    assert.equal(first.accepts[0]!.payTo.toLowerCase(), evm.address.toLowerCase());
  });
});

describe('public catalogue: rate limit per client address', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  before(async () => {
    t = await startTestTreasury({ extraEnv: { TREASURY_RATE_LIMIT_DISCOVERY: '3' } });
  });
  after(() => t?.stop());

  it('answers 429 rate_limited (bucket discovery) past the limit, on both routes', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await t.request('GET', `/discovery/resources?offset=${i}`)).status, 200);
    for (const path of ['/discovery/resources', '/discovery/search?query=x', '/discovery/resources/']) {
      const res = await t.request('GET', path);
      assert.equal(res.status, 429, path);
      assert.equal(res.body.error_code, 'rate_limited');
      assert.equal(res.body.bucket, 'discovery');
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }
    assert.equal((await t.request('HEAD', '/discovery/resources')).status, 429, 'HEAD counts as GET');
  });
});
