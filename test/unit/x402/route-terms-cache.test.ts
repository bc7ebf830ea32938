/**
 * The route terms built once per route (src/x402/seller/route-terms-cache.ts): the same inputs give the same
 * terms and challenge objects; any input that changes what is offered (price, URL, method, the seller's
 * collection address, the configuration) gives new terms; the map stays bounded.
 */
import assert from 'node:assert/strict';
import { resolveX402Options, type X402KoaOptions } from '../../../src/x402/koa/index.js';
import type { FacilitatorClient } from '../../../src/x402/facilitator-client.js';
import type { PaidRequest, PaidSite } from '../../../src/x402/seller/paid-request-port.js';
import { RouteTermsCache } from '../../../src/x402/seller/route-terms-cache.js';
import { decodePaymentRequired } from '../../../src/x402/header-codec.js';

const base: X402KoaOptions = {
  token: 'xx_pat_testtesttesttesttesttesttesttesttesttest123',
  price: '0.01',
  pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  facilitator_url: 'http://127.0.0.1:4022',
  api_url: 'http://127.0.0.1:8080',
  env: {},
};
const PLATFORM = '0x1111111111111111111111111111111111111111' as const;
const facilitator = {} as FacilitatorClient;
const verified = { kind: 'verified', sellerId: 'sel_1', endpointId: undefined } as const;
const request = (over: Partial<PaidRequest> = {}): PaidRequest => ({
  method: 'GET',
  path: '/paid',
  href: 'http://127.0.0.1:1/paid',
  header: () => undefined,
  ...over,
});

describe('x402 seller: route terms built once per route', () => {
  const site: PaidSite = { config: resolveX402Options(base), seller: () => verified };

  it('reuses the terms and the encoded challenge for the same route', async () => {
    const cache = new RouteTermsCache({ facilitator });
    const a = await cache.termsFor(site, request(), 10_000n, verified);
    const b = await cache.termsFor(site, request(), 10_000n, verified);
    assert.ok(a);
    assert.equal(a, b);
    const challenge = cache.paymentRequired(a);
    assert.equal(cache.paymentRequired(a), challenge);
    assert.equal(challenge.status, 402);
    const header = decodePaymentRequired(challenge.headers['PAYMENT-REQUIRED']!);
    assert.equal(header.error, 'payment_required');
    assert.equal(header.accepts[0]!.amount, '10000');
  });

  it('builds new terms when the price, URL, method, collection address or configuration changes', async () => {
    const cache = new RouteTermsCache({ facilitator });
    const first = await cache.termsFor(site, request(), 10_000n, verified);
    const dearer = await cache.termsFor(site, request(), 20_000n, verified);
    assert.equal(dearer?.accepts[0]!.amount, '20000');
    const other = await cache.termsFor(site, request({ href: 'http://127.0.0.1:1/paid?x=1' }), 10_000n, verified);
    assert.equal(other?.resource.url, 'http://127.0.0.1:1/paid?x=1');
    const post = await cache.termsFor(site, request({ method: 'POST' }), 10_000n, verified);
    assert.notEqual(post, first);
    const mor = await cache.termsFor(site, request(), 10_000n, { ...verified, payTo: PLATFORM });
    assert.equal(mor?.accepts[0]!.payTo, PLATFORM);
    const otherSite: PaidSite = { ...site, config: resolveX402Options({ ...base, description: 'another' }) };
    const described = await cache.termsFor(otherSite, request(), 10_000n, verified);
    assert.equal(described?.resource.description, 'another');
    assert.equal(await cache.termsFor(site, request(), 10_000n, verified), first);
  });

  it('stays bounded: a full map is emptied, and what it held is built again', async () => {
    const cache = new RouteTermsCache({ facilitator }, 2);
    const first = await cache.termsFor(site, request(), 10_000n, verified);
    await cache.termsFor(site, request({ href: 'http://127.0.0.1:1/paid?a' }), 10_000n, verified);
    await cache.termsFor(site, request({ href: 'http://127.0.0.1:1/paid?b' }), 10_000n, verified);
    const again = await cache.termsFor(site, request(), 10_000n, verified);
    assert.notEqual(again, first);
    assert.deepEqual(again, first);
  });
});
