/**
 * Seller middleware and the platform: the service PAT is validated on the first paid request and cached;
 * endpoint attribution follows the endpoint rule of docs/seller-middleware.md; a refused PAT or an ambiguous
 * endpoint set is a 500 `seller_misconfigured` whose logged X402ConfigError lists every (slug, endpoint_id) pair.
 */
import assert from 'node:assert/strict';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import { X402ConfigError } from '../../../src/x402/koa/index.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import {
  ENDPOINT_A,
  ENDPOINT_B,
  endpointsReply,
  PAID_BODY,
  SERVICE_PAT,
  startFakes,
  startSellerApp,
  type FakeServer,
  type SellerApp,
} from './x402-fakes.js';

async function pay(app: SellerApp, path = '/paid'): Promise<Response> {
  const c = (await (await fetch(`${app.url}${path}`)).json()) as PaymentRequired;
  const header = encodePaymentPayload(await signExactPayment(c.accepts[0]!));
  return fetch(`${app.url}${path}`, { headers: { 'PAYMENT-SIGNATURE': header } });
}

describe('x402 Koa middleware: seller identity and endpoint attribution', () => {
  let facilitator: FakeServer;
  let platform: FakeServer;
  const apps: SellerApp[] = [];
  const start = async (options: Parameters<typeof startSellerApp>[0]) => {
    const app = await startSellerApp(options);
    apps.push(app);
    return app;
  };

  beforeEach(async () => {
    ({ facilitator, platform } = await startFakes());
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) {
      await app.middleware.flush();
      await app.stop();
    }
    await Promise.all([facilitator.stop(), platform.stop()]);
  });

  /** The platform's /v1/auth/verify names two endpoints of the seller: ENDPOINT_A and ENDPOINT_B with these slugs. */
  const verifyAnswersTwoEndpoints = (slugA: string, slugB: string) =>
    platform.on(
      '/v1/auth/verify',
      endpointsReply([
        { endpoint_id: ENDPOINT_A, slug: slugA },
        { endpoint_id: ENDPOINT_B, slug: slugB },
      ]),
    );

  it('validates the PAT once (Bearer) and caches it across paid requests; free routes never ask', async () => {
    const app = await start({
      facilitator_url: facilitator.url,
      api_url: platform.url,
      route_prices: { '/free': '0' },
    });
    await fetch(`${app.url}/free`);
    assert.equal(platform.callsTo('/v1/auth/verify').length, 0);
    for (let i = 0; i < 3; i++) assert.equal((await pay(app)).status, 200);
    const verifies = platform.callsTo('/v1/auth/verify');
    assert.equal(verifies.length, 1);
    assert.equal(verifies[0]!.headers.authorization, `Bearer ${SERVICE_PAT}`);
  });

  it("a platform_mor seller's challenge names the platform's collection address, asked for the paywall's network", async () => {
    const collection = '0x00000000000000000000000000000000C011EC75';
    const reply = endpointsReply([{ endpoint_id: ENDPOINT_A, slug: 'forecast' }]);
    platform.on('/v1/auth/verify', {
      ...reply,
      body: { ...reply.body, payout_mode: 'platform_mor', collect_to: collection },
    });
    const app = await start({ facilitator_url: facilitator.url, api_url: platform.url });
    assert.equal((await pay(app)).status, 200);
    assert.deepEqual(platform.callsTo('/v1/auth/verify')[0]!.body, { network: 'eip155:84532' });
    const challenge = (await (await fetch(`${app.url}/paid`)).json()) as PaymentRequired;
    assert.deepEqual(
      challenge.accepts.map((a) => a.payTo),
      [collection],
      'buyers pay the platform, not the configured pay_to',
    );
    assert.equal(facilitator.callsTo('/settle')[0]!.body.paymentRequirements.payTo, collection);
  });

  it('a platform_mor seller the platform does not collect for on this network is misconfigured (500)', async () => {
    const reply = endpointsReply([{ endpoint_id: ENDPOINT_A, slug: 'forecast' }]);
    platform.on('/v1/auth/verify', {
      ...reply,
      body: { ...reply.body, payout_mode: 'platform_mor', collect_to: null },
    });
    const app = await start({ facilitator_url: facilitator.url, api_url: platform.url });
    const res = await fetch(`${app.url}/paid`);
    assert.equal(res.status, 500);
    assert.equal(((await res.json()) as { error_code: string }).error_code, 'seller_misconfigured');
  });

  it('one endpoint and no endpoint_id: that endpoint is used for attribution', async () => {
    const app = await start({ facilitator_url: facilitator.url, api_url: platform.url });
    assert.equal((await pay(app)).status, 200);
    await app.middleware.flush();
    assert.equal(platform.callsTo('/v1/ledger')[0]!.body.endpoint_id, ENDPOINT_A);
  });

  it('two endpoints and no endpoint_id: the first paid request fails 500 seller_misconfigured, listing every pair', async () => {
    verifyAnswersTwoEndpoints('forecast', 'history');
    const app = await start({ facilitator_url: facilitator.url, api_url: platform.url });
    const res = await fetch(`${app.url}/paid`);
    assert.equal(res.status, 500);
    const body = (await res.json()) as { error_code: string };
    assert.equal(body.error_code, 'seller_misconfigured');
    assert.equal(app.handlerRuns, 0);
    const logged = app.logs.find((l) => l.level === 'error');
    assert.ok(logged);
    assert.match(logged.msg!, new RegExp(`\\(forecast, ${ENDPOINT_A}\\).*\\(history, ${ENDPOINT_B}\\)`));
    assert.ok(!JSON.stringify(app.logs).includes(SERVICE_PAT), 'the PAT is never logged');
    assert.equal(facilitator.calls.length, 0, 'no payment is taken');
  });

  it('two endpoints with endpoint_id: attribution is pinned', async () => {
    verifyAnswersTwoEndpoints('forecast', 'history');
    const app = await start({ facilitator_url: facilitator.url, api_url: platform.url, endpoint_id: ENDPOINT_B });
    assert.equal((await pay(app)).status, 200);
    await app.middleware.flush();
    assert.equal(platform.callsTo('/v1/ledger')[0]!.body.endpoint_id, ENDPOINT_B);
  });

  it("an endpoint_id that is not the seller's is a configuration error", async () => {
    const app = await start({ facilitator_url: facilitator.url, api_url: platform.url, endpoint_id: ENDPOINT_B });
    const res = await fetch(`${app.url}/paid`);
    assert.equal(res.status, 500);
    assert.match(
      app.logs.find((l) => l.level === 'error')!.msg!,
      /not one of this seller's endpoints: \(forecast, ep_a+\)/,
    );
  });

  it('a PAT the platform refuses (401) → 500 seller_misconfigured, asked again after the cooldown', async () => {
    platform.on('/v1/auth/verify', { status: 401, body: { error_code: 'invalid_token' } });
    const app = await start({
      facilitator_url: facilitator.url,
      api_url: platform.url,
      seller_cache: { failure_cooldown_ms: 100 },
    });
    assert.equal((await fetch(`${app.url}/paid`)).status, 500);
    assert.equal((await fetch(`${app.url}/paid`)).status, 500);
    assert.equal(platform.callsTo('/v1/auth/verify').length, 1, 'failure cached during the cooldown');
    platform.on('/v1/auth/verify', endpointsReply([{ endpoint_id: ENDPOINT_A, slug: 'forecast' }]));
    await new Promise((r) => setTimeout(r, 150));
    assert.equal((await fetch(`${app.url}/paid`)).status, 402);
    assert.equal(platform.callsTo('/v1/auth/verify').length, 2);
  });

  it('the misconfiguration surfaces as an X402ConfigError instance in the log', async () => {
    verifyAnswersTwoEndpoints('a', 'b');
    const app = await start({ facilitator_url: facilitator.url, api_url: platform.url });
    await fetch(`${app.url}/paid`);
    const problems = (app.logs.find((l) => l.level === 'error')!.obj as { problems: string[] }).problems;
    assert.equal(problems.length, 1);
    assert.ok(new X402ConfigError(problems).message.includes(ENDPOINT_B));
  });

  it('platform 5xx on /v1/auth/verify does not block sales; payments proceed and it is asked again later', async () => {
    platform.on('/v1/auth/verify', { status: 503, body: {} });
    const app = await start({
      facilitator_url: facilitator.url,
      api_url: platform.url,
      seller_cache: { failure_cooldown_ms: 50 },
    });
    const res = await pay(app);
    assert.equal(res.status, 200);
    assert.ok((await res.text()).includes(PAID_BODY));
    await new Promise((r) => setTimeout(r, 80));
    await pay(app);
    assert.ok(platform.callsTo('/v1/auth/verify').length >= 2);
  });
});
