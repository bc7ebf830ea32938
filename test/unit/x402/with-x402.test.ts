/**
 * `withX402(app, options)` (src/x402/koa/with-x402.ts): every route of the wrapped app answers 402 without a
 * payment — those registered before the call too — `/health` stays free, the same app is returned, and wrapping
 * twice is refused. Over HTTP on loopback, with nothing paid (no facilitator or platform is reached).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Registry } from 'prom-client';
import { withX402, type X402KoaOptions } from '../../../src/x402/koa/index.js';

const OPTIONS: X402KoaOptions = {
  token: 'xx_pat_exampleexampleexample',
  price: '0.01',
  pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  facilitator_url: 'http://127.0.0.1:9',
  api_url: 'http://127.0.0.1:9',
  registry: new Registry(),
};

describe('withX402: the wrapper form of the Koa seller middleware', () => {
  it('gates every route (those added before the call too) but /health, and returns the same app', async () => {
    const app = new Koa();
    app.use((ctx) => {
      ctx.body = ctx.path === '/health' ? 'ok' : { data: 'paid content' };
    });
    assert.equal(withX402(app, OPTIONS), app);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const data = await fetch(`${base}/data`);
      const body = await data.text();
      assert.equal(data.status, 402);
      assert.ok(data.headers.get('payment-required'), 'PAYMENT-REQUIRED');
      assert.ok(!body.includes('paid content'), 'the handler did not run');
      const health = await fetch(`${base}/health`);
      assert.deepEqual([health.status, await health.text()], [200, 'ok']);
    } finally {
      server.close();
    }
  });

  it('refuses to wrap an app twice', () => {
    const app = withX402(new Koa(), { ...OPTIONS, registry: new Registry() });
    assert.throws(() => withX402(app, { ...OPTIONS, registry: new Registry() }), /already wrapped/);
  });
});
