/**
 * Seller middleware, the path rule (docs/security-model.md#the-gates-path-rule, shared with the gate): what is
 * priced is what is served. On a real Koa app — `x402Koa({ price: '0.01', route_prices: { '/data/premium.csv':
 * '5' } })` in front of a static handler that serves `posix.normalize(decodeURIComponent(ctx.path))`, as
 * koa-static / koa-send and `path.join(root, decodeURIComponent(ctx.path))` handlers resolve it — with a fake
 * facilitator and platform, requests sent as written (raw HTTP: fetch would normalise `/./` and `%2e%2e` itself):
 * - a spelling the handler resolves to the $5 file is refused 400 `x402_path_refused` with the rule's `problem`,
 *   before any 402 or payment: a payment for $0.01 is never verified, and the handler never runs. Without the
 *   rule, a dot segment, plain or escaped (`/data/./premium.csv`, `/x/%2e%2e/data/premium.csv`), was challenged at
 *   the $0.01 default and, paid, served the $5 file; an escaped `/` and `//` (priced $5 by `routePriceKey`'s
 *   folding) are refused too, as the gate refuses them;
 * - every request that reaches the middleware is held to the rule, a free route's odd spelling included;
 * - `/data/premium.csv` as configured still asks $5, and an ordinary path asks the default and, paid, is served.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { posix } from 'node:path';
import Koa from 'koa';
import { Registry } from 'prom-client';
import { x402Koa } from '../../../src/x402/koa/index.js';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { rawExchange, type RawAnswer } from '../gate/raw-http.js';
import { SERVICE_PAT, startFakes, type FakeServer } from './x402-fakes.js';

const PREMIUM = 'PREMIUM-CSV-5-DOLLARS-91c2';
const FILES: Readonly<Record<string, string>> = {
  '/data/premium.csv': PREMIUM,
  '/data/cheap.csv': 'cheap,csv',
  '/public/free.csv': 'free,csv',
};

/** What the static handler serves for a request path: the file at the normalised, decoded path. */
const servedFile = (path: string) => posix.normalize(decodeURIComponent(path));

/** Spellings of `/data/premium.csv` the static handler serves as the $5 file, and the rule's reason for each. */
const PREMIUM_SPELLINGS: ReadonlyArray<[string, string]> = [
  ['/data/./premium.csv', 'dot_segment'],
  ['/x/../data/premium.csv', 'dot_segment'],
  ['/x/%2e%2e/data/premium.csv', 'encoded_separator'],
  ['/x/%2E%2E/data/premium.csv', 'encoded_separator'],
  ['/data/%2e/premium.csv', 'encoded_separator'],
  ['/data%2fpremium.csv', 'encoded_separator'],
  ['/x/..%2fdata/premium.csv', 'encoded_separator'],
  ['/data//premium.csv', 'empty_segment'],
];

interface StaticSeller {
  url: string;
  readonly served: string[];
  stop(): Promise<void>;
}

async function startStaticSeller(facilitatorUrl: string, apiUrl: string): Promise<StaticSeller> {
  const app = new Koa();
  app.silent = true;
  const served: string[] = [];
  app.use(
    x402Koa({
      token: SERVICE_PAT,
      price: '0.01',
      route_prices: { '/data/premium.csv': '5', '/public/free.csv': '0' },
      pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
      facilitator_url: facilitatorUrl,
      api_url: apiUrl,
      registry: new Registry(),
      env: {},
    }),
  );
  app.use((ctx) => {
    const file = servedFile(ctx.path);
    served.push(file);
    const body = FILES[file];
    if (body === undefined) ctx.status = 404;
    else ctx.body = body;
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const json = (a: RawAnswer) => JSON.parse(a.body) as { error_code?: string; problem?: string; accepts?: unknown };
const amountOf = (a: RawAnswer) => (JSON.parse(a.body) as PaymentRequired).accepts[0]!.amount;

describe('x402 Koa middleware: the path rule — what is priced is what is served', function () {
  this.timeout(30_000);
  let facilitator: FakeServer;
  let platform: FakeServer;
  let seller: StaticSeller;

  beforeEach(async () => {
    ({ facilitator, platform } = await startFakes());
    seller = await startStaticSeller(facilitator.url, platform.url);
  });
  afterEach(async () => {
    await seller.stop();
    await Promise.all([facilitator.stop(), platform.stop()]);
  });

  /** A payment signed for the $0.01 terms of an ordinary path. */
  async function cheapPayment(): Promise<string> {
    const challenged = await rawExchange(seller.url, { target: '/data/cheap.csv' });
    assert.equal(challenged.status, 402, challenged.body);
    return encodePaymentPayload(await signExactPayment((JSON.parse(challenged.body) as PaymentRequired).accepts[0]!));
  }

  it('a spelling the handler serves as the $5 file is refused 400 x402_path_refused, not priced at $0.01', async () => {
    const payment = await cheapPayment();
    for (const [target, problem] of PREMIUM_SPELLINGS) {
      assert.equal(servedFile(target), '/data/premium.csv', `${target}: the handler would serve the $5 file`);
      const unpaid = await rawExchange(seller.url, { target });
      assert.equal(unpaid.status, 400, `${target}: ${unpaid.status} ${unpaid.body}`);
      assert.deepEqual(
        { code: json(unpaid).error_code, problem: json(unpaid).problem },
        { code: 'x402_path_refused', problem },
        target,
      );
      assert.equal(unpaid.headers['payment-required'], undefined, target);
      assert.ok(!unpaid.body.includes(PREMIUM), target);
      const paid = await rawExchange(seller.url, { target, headers: { 'PAYMENT-SIGNATURE': payment } });
      assert.equal(paid.status, 400, `${target} paid: ${paid.status} ${paid.body}`);
      assert.equal(json(paid).error_code, 'x402_path_refused', target);
      assert.ok(!paid.body.includes(PREMIUM), target);
    }
    assert.deepEqual(seller.served, [], 'the handler ran for a refused path');
    assert.equal(facilitator.calls.length, 0, 'a payment for a refused path was verified');
  });

  it('holds every request to the rule: a free route’s odd spelling and OPTIONS are refused too', async () => {
    for (const [target, method] of [
      ['/public/./free.csv', 'GET'],
      ['/public/%2e/free.csv', 'GET'],
      ['/data/./premium.csv', 'OPTIONS'],
      ['/data/premium.csv;v=1', 'GET'],
    ] as const) {
      const answer = await rawExchange(seller.url, { method, target });
      assert.equal(answer.status, 400, `${method} ${target}: ${answer.status} ${answer.body}`);
      assert.equal(json(answer).error_code, 'x402_path_refused', target);
    }
    assert.deepEqual(seller.served, []);
    // As configured, the free route passes.
    const free = await rawExchange(seller.url, { target: '/public/free.csv' });
    assert.equal(free.status, 200);
    assert.equal(free.body, 'free,csv');
  });

  it('the $5 route as configured still asks $5; an ordinary path asks $0.01 and, paid, is served', async () => {
    for (const target of ['/data/premium.csv', '/data/premium.csv?v=1', '/Data/Premium.csv']) {
      const challenged = await rawExchange(seller.url, { target });
      assert.equal(challenged.status, 402, `${target}: ${challenged.body}`);
      assert.equal(amountOf(challenged), '5000000', target);
    }
    const cheap = await rawExchange(seller.url, { target: '/data/cheap.csv' });
    assert.equal(cheap.status, 402);
    assert.equal(amountOf(cheap), '10000');
    const paid = await rawExchange(seller.url, {
      target: '/data/cheap.csv',
      headers: { 'PAYMENT-SIGNATURE': await cheapPayment() },
    });
    assert.equal(paid.status, 200, paid.body);
    assert.equal(paid.body, 'cheap,csv');
    assert.ok(paid.headers['payment-response'], 'the receipt is on the answer');
    assert.deepEqual(seller.served, ['/data/cheap.csv']);
  });
});
