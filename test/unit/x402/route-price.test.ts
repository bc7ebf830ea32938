/**
 * The price of a request path (src/x402/seller/route-price.ts), shared by the Koa middleware and the gate: a
 * route price is found for every spelling of its path (case, escapes, duplicate and trailing slashes), but a price
 * below the default applies only to the path as the seller configured it — a case-sensitive or trailing-slash-strict
 * origin may serve another spelling as another resource, so that spelling pays the dearer of the two. A price above
 * the default is never escaped by spelling the path another way.
 */
import assert from 'node:assert/strict';
import { resolveX402Options, type X402KoaOptions } from '../../../src/x402/koa/index.js';
import { priceOf } from '../../../src/x402/seller/paid-request.js';

const base: X402KoaOptions = {
  token: 'xx_pat_testtesttesttesttesttesttesttesttesttest123',
  price: '0.01',
  pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  facilitator_url: 'http://127.0.0.1:4022',
  api_url: 'http://127.0.0.1:8080',
  env: {},
};

describe('x402 seller: the price of a path', () => {
  const config = resolveX402Options({
    ...base,
    route_prices: { '/reports/sample': '0', '/Cheap/': '0.005', '/premium': '2.5', '/café': '' },
  });

  it('a route price below the default applies to the configured spelling only', () => {
    assert.equal(priceOf(config, '/reports/sample'), 0n);
    assert.equal(priceOf(config, '/Cheap/'), 5_000n);
    for (const path of ['/reports/SAMPLE', '/reports/sample/', '/reports//sample', '/reports/s%61mple', '/cheap'])
      assert.equal(priceOf(config, path), 10_000n, path);
  });

  it('a configured path with non-ASCII characters is also its percent-encoded spelling, as clients send it', () => {
    assert.equal(priceOf(config, '/caf%C3%A9'), 0n);
    assert.equal(priceOf(config, '/café'), 0n);
    assert.equal(priceOf(config, '/caf%c3%a9'), 10_000n);
    assert.equal(priceOf(config, '/CAF%C3%89'), 10_000n);
    // A lone surrogate has no UTF-8 spelling: kept as configured, and no exception.
    const odd = resolveX402Options({ ...base, route_prices: { '/x\ud800': '0' } });
    assert.equal(priceOf(odd, '/x\ud800'), 0n);
  });

  it('a route price above the default holds for every spelling; other paths pay the default', () => {
    for (const path of ['/premium', '/PREMIUM', '/premium/', '/%70remium'])
      assert.equal(priceOf(config, path), 2_500_000n, path);
    assert.equal(priceOf(config, '/other'), 10_000n);
    assert.equal(priceOf(resolveX402Options(base), '/reports/sample'), 10_000n);
  });
});
