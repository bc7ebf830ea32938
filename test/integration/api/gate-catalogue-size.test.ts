/**
 * `GET /v1/gate/catalogue` is bounded in size, whatever the account's endpoints declare: it carries only what
 * selling takes, and declarations (capability tags, input and output schemas) only within one byte budget per
 * catalogue (MAX_GATE_DECLARATION_BYTES) — the oldest endpoints keep theirs, later ones have none, and every
 * endpoint is still listed with its terms. Asserted on the answer's size, not on time or memory.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { gateCatalogueSchema, MAX_GATE_DECLARATION_BYTES } from '../../../src/shared/api-responses/gate-responses.js';

/** A schema of just under 16 KiB of JSON (the most the OpenAPI refresh keeps). */
const bigSchema = (tag: string) => ({
  type: 'object',
  properties: Object.fromEntries(
    Array.from({ length: 56 }, (_, i) => [`${tag}${i}`, { type: 'string', description: 'd'.repeat(240) }]),
  ),
});
/** 64 capability tags of 128 characters: the most an endpoint holds. */
const tags = Array.from({ length: 64 }, (_, i) => `t${String(i).padStart(2, '0')}${'x'.repeat(125)}`);

describe('gate catalogue: bounded size (HTTP, PostgreSQL)', function () {
  this.timeout(180_000);
  const t = useTestTreasury();

  it('lists 1,000 endpoints with ~40 KiB of declarations each within the declaration budget', async () => {
    const me = await signInWithNewKey(t);
    const seller = (
      await t.request('POST', '/v1/sellers', {
        token: me.session,
        body: { name: 'Heavy', protocol: 'mpp', origin: 'http://127.0.0.1:9' },
      })
    ).body as { seller_id: string };
    const discovery = { description: 'e'.repeat(512), input_schema: bigSchema('i'), output_schema: bigSchema('o') };
    assert.ok(Buffer.byteLength(JSON.stringify(discovery.input_schema)) <= 16 * 1024);
    const start = Date.parse('2026-01-01T00:00:00Z');
    const rows = Array.from({ length: 1000 }, (_, i) => ({
      id: `ep_${randomBytes(12).toString('hex')}`,
      seller_id: seller.seller_id,
      slug: `op-${i}`,
      method: 'POST',
      path: `/op/${String(i).padStart(4, '0')}`,
      path_pattern: null,
      price_micro: '10000',
      priced: true,
      route_prices: JSON.stringify({ [`/op/${String(i).padStart(4, '0')}`]: '0.02' }),
      capabilities: JSON.stringify(tags),
      discovery: JSON.stringify(discovery),
      source: 'openapi',
      created_at: new Date(start + i),
      updated_at: new Date(start + i),
    }));
    for (let i = 0; i < rows.length; i += 100) await t.db.knex('endpoints').insert(rows.slice(i, i + 100));

    const pat = (await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'gate' } })).body.pat;
    const res = await t.request('GET', '/v1/gate/catalogue', { token: pat });
    assert.equal(res.status, 200);
    const bytes = Buffer.byteLength(JSON.stringify(res.body));
    // Declarations within their budget, and at most ~300 bytes of terms per endpoint here.
    const bound = MAX_GATE_DECLARATION_BYTES + 1000 * 300 + 4096;
    assert.ok(bytes <= bound, `${bytes} bytes, bound ${bound}`);
    assert.ok(gateCatalogueSchema.safeParse(res.body).success, 'the gate parses it');

    const endpoints = res.body.sellers[0].endpoints as Array<Record<string, any>>;
    assert.equal(endpoints.length, 1000, 'every endpoint is listed');
    assert.ok(endpoints.every((e, i) => e.price === '0.01' && e.route_prices[`/op/${String(i).padStart(4, '0')}`]));
    const declared = endpoints.filter((e) => e.discovery !== null);
    assert.ok(declared.length > 0, 'the oldest endpoints keep their declarations');
    assert.ok(declared.length < 1000);
    endpoints.forEach((e, i) => {
      if (i < declared.length) {
        assert.deepEqual(e.discovery, { input_schema: discovery.input_schema, output_schema: discovery.output_schema });
        assert.deepEqual(e.capabilities, tags);
      } else {
        assert.equal(e.discovery, null, `endpoint ${i}`);
        assert.equal(e.capabilities, undefined, `endpoint ${i}`);
      }
      assert.deepEqual(
        Object.keys(e).filter((k) => !['capabilities'].includes(k)),
        ['endpoint_id', 'slug', 'method', 'path', 'path_pattern', 'price', 'route_prices', 'priced', 'discovery'],
        'only what selling takes',
      );
    });
  });
});
