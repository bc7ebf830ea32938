/**
 * Rule 1 of the paywall (src/x402/seller/unpaid-pass.ts), one table of requests against one configuration: only
 * a route priced 0 passes on every method; OPTIONS to a priced route is a preflight (answered, never passed); a
 * bodiless GET or HEAD of `/health` passes on a site that lets the probe through unless `route_prices` prices it;
 * everything else is priced — `/health` with another method, a body or another spelling included. The preflight
 * headers themselves (src/x402/seller/cors-preflight.ts): plain header names echoed, anything else replaced.
 */
import assert from 'node:assert/strict';
import { resolveX402Options, type X402KoaOptions } from '../../../src/x402/koa/index.js';
import { allowedMethods, preflightHeaders } from '../../../src/x402/seller/cors-preflight.js';
import { unpaidPass, type UnpaidPass } from '../../../src/x402/seller/unpaid-pass.js';

const base: X402KoaOptions = {
  token: 'xx_pat_testtesttesttesttesttesttesttesttesttest123',
  price: '0.01',
  pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  facilitator_url: 'http://127.0.0.1:4022',
  api_url: 'http://127.0.0.1:8080',
  env: {},
};
const config = resolveX402Options({ ...base, route_prices: { '/free': '0', '/premium': '2.5' } });
const healthPriced = resolveX402Options({ ...base, route_prices: { '/Health/': '0.05' } });
const healthFree = resolveX402Options({ ...base, route_prices: { '/health': '0' } });

function passOf(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  { probe = true, cfg = config } = {},
): UnpaidPass['kind'] {
  return unpaidPass(cfg, { method, path, header: (name) => headers[name] }, probe).kind;
}

describe('x402 seller: rule 1, what passes before any payment', () => {
  it('a free route passes on every method, OPTIONS included', () => {
    for (const method of ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'])
      assert.equal(passOf(method, '/free', { 'content-length': '3' }), 'free', method);
    assert.equal(passOf('POST', '/health', { 'content-length': '1' }, { cfg: healthFree }), 'free');
  });

  it('OPTIONS to a priced route is a preflight, never a pass', () => {
    for (const path of ['/joke', '/premium', '/PREMIUM/', '/health'])
      assert.equal(passOf('OPTIONS', path, { 'content-length': '9' }), 'preflight', path);
  });

  it('the /health probe: a bodiless GET or HEAD, on a site that lets it through, unless route_prices prices it', () => {
    assert.equal(passOf('GET', '/health'), 'probe');
    assert.equal(passOf('HEAD', '/health', { 'content-length': '0' }), 'probe');
    const priced: Array<[string, string, Record<string, string>, { probe?: boolean; cfg?: typeof config }]> = [
      ['GET', '/health', {}, { probe: false }], // the gate decides /health itself
      ['GET', '/health', {}, { cfg: healthPriced }],
      ['HEAD', '/health', {}, { cfg: healthPriced }],
      ['POST', '/health', {}, {}],
      ['DELETE', '/health', {}, {}],
      ['GET', '/health', { 'content-length': '4' }, {}],
      ['GET', '/health', { 'transfer-encoding': 'chunked' }, {}],
      ['GET', '/HEALTH', {}, {}],
      ['GET', '/health/', {}, {}],
      ['GET', '/%68ealth', {}, {}],
    ];
    for (const [method, path, headers, options] of priced)
      assert.equal(passOf(method, path, headers, options), 'priced', `${method} ${path} ${JSON.stringify(headers)}`);
  });

  it('the price travels with a priced request', () => {
    assert.deepEqual(unpaidPass(config, { method: 'GET', path: '/premium', header: () => undefined }, true), {
      kind: 'priced',
      price: 2_500_000n,
    });
    assert.deepEqual(unpaidPass(healthPriced, { method: 'GET', path: '/health', header: () => undefined }, true), {
      kind: 'priced',
      price: 50_000n,
    });
  });

  it('the preflight answer: every method the paywall sells, CORS headers only for a CORS request', () => {
    const headers = (h: Record<string, string>) => {
      const pass = unpaidPass(config, { method: 'OPTIONS', path: '/joke', header: (name) => h[name] }, true);
      assert.equal(pass.kind, 'preflight');
      return pass.kind === 'preflight' ? pass.headers : {};
    };
    const bare = headers({});
    assert.equal(bare.allow, 'DELETE, GET, HEAD, PATCH, POST, PUT, OPTIONS');
    assert.equal(bare['access-control-allow-origin'], undefined);
    const cors = headers({
      origin: 'https://app.example',
      'access-control-request-headers': 'X-Custom, payment-signature',
    });
    assert.equal(cors['access-control-allow-origin'], '*');
    assert.equal(cors['access-control-allow-methods'], bare.allow);
    assert.equal(cors['access-control-allow-headers'], 'X-Custom, payment-signature');
    assert.equal(cors['access-control-expose-headers'], 'payment-required, payment-response, x-payment-response');
  });

  it('preflight headers: a requested header list that is not plain names is replaced; methods in a stable order', () => {
    for (const asked of ['x\r\nset-cookie: a=b', 'a b', `${'x,'.repeat(600)}x`, ''])
      assert.equal(
        preflightHeaders(['GET'], { origin: 'https://a.example', requestHeaders: asked })[
          'access-control-allow-headers'
        ],
        'content-type, payment-signature, x-payment',
        JSON.stringify(asked.slice(0, 20)),
      );
    assert.deepEqual(allowedMethods(['post', 'GET', 'OPTIONS', 'get']), ['GET', 'HEAD', 'POST', 'OPTIONS']);
  });
});
