/**
 * The middleware's 402 declares Bazaar discovery: `extensions.bazaar` is accepted by the official
 * `validateDiscoveryExtension`, carries the request's method and (for a route with parameters) the route
 * template and path parameters, and the challenge's `resource` names the seller's service and tags, bounded.
 * A payment built by the official `@x402/fetch` client from our 402 echoes it, and the official
 * `extractDiscoveryInfo(payload, requirements)` — what a facilitator that catalogues from paid traffic reads —
 * gives the resource URL, the method and the route template.
 */
import assert from 'node:assert/strict';
import { extractDiscoveryInfo, validateDiscoveryExtension, type DiscoveryExtension } from '@x402/extensions/bazaar';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { officialClient } from '../../unit/x402/x402-fixtures.js';
import { useSellerAppPerTest } from './x402-fakes.js';

const discovery = {
  service_name: '  Weather & Tides Forecasting Service for Agents  ',
  tags: ['weather', 'WEATHER', 'tides', 'forecast', 'ocean', 'maps', 'extra-sixth', 'x'.repeat(40)],
  routes: {
    '/weather/{city}': {
      input_schema: { type: 'object', properties: { units: { type: 'string' } } },
      output_example: { temperature: 21 },
      output_schema: { type: 'object', properties: { temperature: { type: 'number' } } },
    },
    '/notes': {
      body_type: 'json' as const,
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      input_example: { text: 'hello' },
    },
  },
};

async function challengeOf(url: string, init?: RequestInit): Promise<PaymentRequired> {
  const res = await fetch(url, init);
  assert.equal(res.status, 402);
  return (await res.json()) as PaymentRequired;
}

const bazaarOf = (c: PaymentRequired) =>
  (c.extensions as { bazaar: DiscoveryExtension & Record<string, unknown> }).bazaar;

describe('x402 Koa middleware: Bazaar declared on every 402', () => {
  describe('with a discovery option', () => {
    const { app, facilitator } = useSellerAppPerTest({ discovery });

    it('declares a valid extension with the method, route template, path parameters and bounded metadata', async () => {
      const c = await challengeOf(`${app.url}/weather/paris?units=metric`);
      const bazaar = bazaarOf(c);
      assert.deepEqual(validateDiscoveryExtension(bazaar), { valid: true });
      assert.equal(bazaar.info.input.type, 'http');
      assert.equal((bazaar.info.input as { method?: string }).method, 'GET');
      assert.equal(bazaar.routeTemplate, '/weather/:city');
      assert.deepEqual((bazaar.info.input as { pathParams?: unknown }).pathParams, { city: 'paris' });
      assert.deepEqual(bazaar.info.output, { type: 'json', example: { temperature: 21 } });
      assert.equal(c.resource.serviceName, 'Weather & Tides Forecasting Serv');
      assert.deepEqual(c.resource.tags, ['weather', 'tides', 'forecast', 'ocean', 'maps']);
      // The header carries the same challenge as the body.
      const header = (await fetch(`${app.url}/weather/paris`)).headers.get('payment-required')!;
      assert.deepEqual(JSON.parse(Buffer.from(header, 'base64').toString('utf8')).extensions, c.extensions);
    });

    it('a body route declares its body type and schema with the POST method', async () => {
      const c = await challengeOf(`${app.url}/notes`, { method: 'POST', body: '{}' });
      const bazaar = bazaarOf(c);
      assert.deepEqual(validateDiscoveryExtension(bazaar), { valid: true });
      assert.equal((bazaar.info.input as { method?: string }).method, 'POST');
      assert.equal((bazaar.info.input as { bodyType?: string }).bodyType, 'json');
      assert.equal(bazaar.routeTemplate, undefined);
    });

    it('the official client echoes it, and extractDiscoveryInfo reads the resource, method and route template', async () => {
      const paidFetch = wrapFetchWithPayment(fetch, officialClient());
      const res = await paidFetch(`${app.url}/weather/lisbon?units=metric`);
      assert.equal(res.status, 200);
      const verify = facilitator.callsTo('/verify')[0]!;
      const { paymentPayload } = verify.body;
      const discovered = extractDiscoveryInfo(paymentPayload, paymentPayload.accepted);
      assert.ok(discovered, 'a facilitator finds a discoverable resource in the payment');
      assert.equal(discovered.resourceUrl, `${app.url}/weather/:city`);
      assert.ok('method' in discovered);
      assert.equal(discovered.method, 'GET');
      assert.equal(discovered.routeTemplate, '/weather/:city');
      assert.equal(discovered.serviceName, 'Weather & Tides Forecasting Serv');
      assert.deepEqual(discovered.tags, ['weather', 'tides', 'forecast', 'ocean', 'maps']);
      // What the facilitator is asked to verify carries no informational extension fields.
      assert.equal(verify.body.paymentRequirements.extensions, undefined);
    });
  });

  describe('by default', () => {
    const { app } = useSellerAppPerTest();

    it('declares the method-only extension, valid, with no service metadata', async () => {
      const c = await challengeOf(`${app.url}/paid`);
      const bazaar = bazaarOf(c);
      assert.deepEqual(validateDiscoveryExtension(bazaar), { valid: true });
      assert.equal((bazaar.info.input as { method?: string }).method, 'GET');
      assert.equal(c.resource.serviceName, undefined);
      assert.equal(c.resource.tags, undefined);
    });
  });

  describe('turned off', () => {
    const { app } = useSellerAppPerTest({ discovery: { enabled: false } });

    it('declares no bazaar extension (the others stay)', async () => {
      const c = await challengeOf(`${app.url}/paid`);
      assert.equal(c.extensions?.bazaar, undefined);
      assert.ok(c.extensions?.['payment-identifier'], 'payment-identifier is declared whatever discovery says');
    });
  });
});
