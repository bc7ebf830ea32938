/**
 * The gate's 402 declares Bazaar discovery from what its catalogue says of the endpoint: the seller's name and the
 * endpoint's capabilities as `serviceName` / `tags`, its OpenAPI input schema, its method, and its path pattern as
 * the route template behind the seller's `/<slug>` prefix. The official validator accepts it; a payment the
 * official `@x402/fetch` client builds from the gate's 402 gives, through `extractDiscoveryInfo`, the resource
 * URL (the gate's, with the template), the method and the template.
 */
import assert from 'node:assert/strict';
import { extractDiscoveryInfo, validateDiscoveryExtension, type DiscoveryExtension } from '@x402/extensions/bazaar';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { officialClient } from '../../unit/x402/x402-fixtures.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import {
  catalogueEndpoint,
  GATE_SLUG,
  startOrigin,
  startTestGate,
  tableCatalogue,
  type TestGate,
  type TestOrigin,
} from './gate-fakes.js';

describe('gate: Bazaar declared on every 402', () => {
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  let gate: TestGate;

  beforeEach(async () => {
    ({ facilitator, platform } = await startFakes());
    origin = await startOrigin();
    const items = {
      ...catalogueEndpoint('/items', '0.02'),
      path_pattern: '/items/{id}',
      capabilities: ['catalog', 'items'],
      discovery: {
        description: 'One item',
        input_schema: { type: 'object', properties: { fields: { type: 'string' } } },
      },
    };
    platform.on('/v1/gate/catalogue', {
      status: 200,
      body: tableCatalogue(origin.url, {
        name: 'Weather Station Items',
        endpoints: [catalogueEndpoint('/paid', '0.01'), items],
      }),
    });
    platform.on('/v1/gate/ledger/batch', { status: 200, body: { results: [] } });
    gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url });
  });

  afterEach(async () => {
    await gate.stop();
    await Promise.all([origin.stop(), facilitator.stop(), platform.stop()]);
  });

  it('declares the method, the prefixed route template, path parameters and the seller metadata', async () => {
    const res = await fetch(`${gate.url}/${GATE_SLUG}/items/42?fields=name`);
    assert.equal(res.status, 402);
    const c = (await res.json()) as PaymentRequired;
    const bazaar = (c.extensions as { bazaar: DiscoveryExtension & { routeTemplate?: string } }).bazaar;
    assert.deepEqual(validateDiscoveryExtension(bazaar), { valid: true });
    assert.equal((bazaar.info.input as { method?: string }).method, 'GET');
    assert.equal(bazaar.routeTemplate, `/${GATE_SLUG}/items/:id`);
    assert.deepEqual((bazaar.info.input as { pathParams?: unknown }).pathParams, { id: '42' });
    assert.equal(c.resource.serviceName, 'Weather Station Items');
    assert.deepEqual(c.resource.tags, ['catalog', 'items']);
    const plain = (await (await fetch(`${gate.url}/${GATE_SLUG}/paid`)).json()) as PaymentRequired;
    assert.deepEqual(validateDiscoveryExtension((plain.extensions as { bazaar: DiscoveryExtension }).bazaar), {
      valid: true,
    });
  });

  it('extractDiscoveryInfo reads the resource, method and route template from the official client payment', async () => {
    const paidFetch = wrapFetchWithPayment(fetch, officialClient());
    const res = await paidFetch(`${gate.url}/${GATE_SLUG}/items/7`);
    assert.equal(res.status, 200);
    const { paymentPayload } = facilitator.callsTo('/verify')[0]!.body;
    const discovered = extractDiscoveryInfo(paymentPayload, paymentPayload.accepted);
    assert.ok(discovered && 'method' in discovered);
    assert.equal(discovered.resourceUrl, `${gate.url}/${GATE_SLUG}/items/:id`);
    assert.equal(discovered.method, 'GET');
    assert.equal(discovered.routeTemplate, `/${GATE_SLUG}/items/:id`);
    assert.equal(discovered.serviceName, 'Weather Station Items');
  });
});
