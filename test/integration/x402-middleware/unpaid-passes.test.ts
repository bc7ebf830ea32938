/**
 * Seller middleware, what passes without a payment (docs/seller-middleware.md#rules-and-runtime-answers): what is
 * priced is exactly what is served. On a real Koa app (the quick start's shape: the paywall, then one handler
 * answering every path with the paid body), a fake facilitator and platform:
 * - OPTIONS to a priced route is answered by the paywall (204, the CORS preflight headers), never by the handler;
 *   to a free route it passes as any free request does;
 * - `/health` passes unpaid as a bodiless GET or HEAD unless `route_prices` prices it; priced, it is charged on
 *   every method like any route, in both forms of the middleware (`x402Koa` and `withX402`);
 * - a free (or cheaper) route price applies to its path as configured only: another spelling of it (case, a
 *   trailing slash, an escape), which a case-sensitive router may serve as another resource, pays the default;
 *   a spelling the path rule refuses (`//`, an escaped slash) is 400 `x402_path_refused` in both forms
 *   (path-rule.test.ts holds the rule against a static handler).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Registry } from 'prom-client';
import { ERROR_CODES } from '../../../src/shared/error-codes.js';
import { withX402, x402Koa, type X402KoaOptions } from '../../../src/x402/koa/index.js';
import { PAID_BODY, SERVICE_PAT, startFakes, type FakeServer } from './x402-fakes.js';

const X402_PATH_REFUSED_MESSAGE = ERROR_CODES.x402_path_refused.message;

interface QuickStart {
  url: string;
  readonly handlerRuns: number;
  stop(): Promise<void>;
}

/** The quick start: `app.use(x402Koa(options)); app.use(ctx => { ctx.body = { joke } })` (or `withX402`). */
async function startQuickStart(
  options: Partial<X402KoaOptions> & Pick<X402KoaOptions, 'facilitator_url' | 'api_url'>,
  form: 'x402Koa' | 'withX402' = 'x402Koa',
): Promise<QuickStart> {
  const full: X402KoaOptions = {
    token: SERVICE_PAT,
    price: '0.01',
    pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
    registry: new Registry(),
    env: {},
    ...options,
  };
  const app = new Koa();
  app.silent = true;
  const state = { handlerRuns: 0 };
  if (form === 'x402Koa') app.use(x402Koa(full));
  app.use((ctx) => {
    state.handlerRuns++;
    ctx.body = { joke: PAID_BODY };
  });
  if (form === 'withX402') withX402(app, full);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get handlerRuns() {
      return state.handlerRuns;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('x402 Koa middleware: what passes unpaid', () => {
  let facilitator: FakeServer;
  let platform: FakeServer;
  let app: QuickStart | undefined;
  const start = async (options: Partial<X402KoaOptions> = {}, form?: 'x402Koa' | 'withX402') =>
    (app = await startQuickStart({ facilitator_url: facilitator.url, api_url: platform.url, ...options }, form));

  beforeEach(async () => ({ facilitator, platform } = await startFakes()));
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    await Promise.all([facilitator.stop(), platform.stop()]);
  });

  it('OPTIONS to a priced route is answered by the paywall (204, preflight headers); the handler never runs', async () => {
    const seller = await start();
    const preflight = await fetch(`${seller.url}/joke`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
    });
    const text = await preflight.text();
    assert.equal(preflight.status, 204, text);
    assert.ok(!text.includes(PAID_BODY), 'the paid body left on OPTIONS');
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /\bGET\b/);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /payment-signature/);
    assert.match(preflight.headers.get('access-control-expose-headers') ?? '', /payment-response/);
    assert.match(preflight.headers.get('allow') ?? '', /\bOPTIONS\b/);
    // Without an Origin, and with a body: still the paywall's 204, never the handler.
    const bare = await fetch(`${seller.url}/joke`, { method: 'OPTIONS', body: 'smuggled work' });
    assert.equal(bare.status, 204);
    assert.equal(await bare.text(), '');
    assert.equal(bare.headers.get('access-control-allow-origin'), null);
    assert.equal(seller.handlerRuns, 0);
    assert.equal(facilitator.calls.length, 0);
    // The paid route itself is still charged.
    assert.equal((await fetch(`${seller.url}/joke`)).status, 402);
    assert.equal(seller.handlerRuns, 0);
  });

  it('OPTIONS to a free route passes to the handler as any free request does', async () => {
    const seller = await start({ route_prices: { '/free': '0' } });
    const res = await fetch(`${seller.url}/free`, { method: 'OPTIONS' });
    assert.equal(res.status, 200);
    assert.equal(seller.handlerRuns, 1);
  });

  it('a free route price frees the path as configured only; other spellings of it pay the default', async () => {
    const seller = await start({ route_prices: { '/reports/sample': '0', '/café': '' } });
    for (const path of ['/reports/sample', '/caf%C3%A9'])
      assert.equal((await fetch(`${seller.url}${path}`)).status, 200);
    assert.equal(seller.handlerRuns, 2);
    for (const path of ['/reports/SAMPLE', '/reports/sample/', '/reports/s%41mple', '/CAF%C3%A9']) {
      const res = await fetch(`${seller.url}${path}`);
      assert.equal(res.status, 402, path);
      assert.equal(((await res.json()) as { accepts: Array<{ amount: string }> }).accepts[0]!.amount, '10000', path);
    }
    // An empty segment is not a spelling the paywall prices: the path rule refuses it (path-rule.test.ts).
    const doubled = await fetch(`${seller.url}/reports//sample`);
    assert.equal(doubled.status, 400);
    assert.equal(((await doubled.json()) as { error_code: string }).error_code, 'x402_path_refused');
    assert.equal(seller.handlerRuns, 2);
  });

  it('withX402: a path the rule refuses is answered 400 before any 402; the handler never runs', async () => {
    const seller = await start({ route_prices: { '/reports/sample': '5' } }, 'withX402');
    const res = await fetch(`${seller.url}/reports%2Fsample`); // fetch would resolve an escaped dot itself
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('payment-required'), null);
    assert.deepEqual(await res.json(), {
      error_code: 'x402_path_refused',
      user_message: X402_PATH_REFUSED_MESSAGE,
      problem: 'encoded_separator',
    });
    assert.equal(seller.handlerRuns, 0);
  });

  for (const form of ['x402Koa', 'withX402'] as const) {
    it(`${form}: /health priced by route_prices is charged on every method; the handler never runs`, async () => {
      const seller = await start({ route_prices: { '/health': '0.05' } }, form);
      for (const init of [{ method: 'GET' }, { method: 'HEAD' }, { method: 'POST', body: 'x' }]) {
        const res = await fetch(`${seller.url}/health`, init);
        assert.equal(res.status, 402, `${init.method} /health`);
        assert.ok(!(await res.text()).includes(PAID_BODY));
      }
      const challenged = await fetch(`${seller.url}/health`);
      const accepted = ((await challenged.json()) as { accepts: Array<{ amount: string }> }).accepts[0]!;
      assert.equal(accepted.amount, '50000');
      assert.equal(seller.handlerRuns, 0);
    });

    it(`${form}: unpriced, /health passes as a bodiless GET or HEAD only`, async () => {
      const seller = await start({}, form);
      const get = await fetch(`${seller.url}/health`);
      assert.equal(get.status, 200);
      assert.equal(get.headers.get('payment-required'), null);
      assert.equal((await fetch(`${seller.url}/health`, { method: 'HEAD' })).status, 200);
      assert.equal(seller.handlerRuns, 2);
      // Not a probe: priced like any other path.
      const post = await fetch(`${seller.url}/health`, { method: 'POST', body: 'x' });
      assert.equal(post.status, 402);
      assert.equal((await fetch(`${seller.url}/HEALTH`)).status, 402);
      assert.equal(seller.handlerRuns, 2);
    });
  }
});
