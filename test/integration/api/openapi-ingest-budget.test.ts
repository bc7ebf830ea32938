/**
 * OpenAPI ingest is bounded per document, not only per schema (src/api/sellers/origin/openapi-discovery.ts):
 * operations past the first 1,000 are never looked at, and the schemas of all the kept ones draw on one node
 * budget — past it, operations are still ingested (priced, described) but without schemas. Asserted on the
 * work counted (nodes walked) and on what is stored, never on time.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import * as discovery from '../../../src/api/sellers/origin/openapi-discovery.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { openApiDocHandler } from '../../support/loopback-servers.js';

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const pad = (n: number) => String(n).padStart(4, '0');

/** Components whose references expand to ~10,000 nodes: each schema naming `Outer` spends its whole own budget. */
function expensiveComponents(): Record<string, unknown> {
  const inner = Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`f${i}`, { type: 'string' }]));
  const outer = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, ref('Inner')]));
  return { Inner: { type: 'object', properties: inner }, Outer: { type: 'object', properties: outer } };
}

describe('OpenAPI ingest: one node budget per document (HTTP, PostgreSQL)', function () {
  this.timeout(300_000);
  let t: TestTreasury;
  let doc: Record<string, unknown>;
  let server: http.Server;
  let url: string;

  before(async () => {
    t = await startTestTreasury();
    server = http.createServer(openApiDocHandler(() => doc));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/openapi.json`;
  });
  after(async () => {
    server?.close();
    await t?.stop();
  });

  async function register(name: string): Promise<{ seller_id: string; ingest: { added: string[] } }> {
    const { session } = await signInWithNewKey(t);
    const res = await t.request('POST', '/v1/sellers', { token: session, body: { name, openapi_url: url } });
    assert.equal(res.status, 201, JSON.stringify(res.body).slice(0, 500));
    return res.body;
  }

  it('never walks the schemas of operations past the first 1,000', async () => {
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 1000; i++) paths[`/plain${pad(i)}`] = { get: { operationId: `plain${pad(i)}` } };
    // Past the bound: operations whose schemas would each cost 10,000 nodes if anything looked at them.
    for (let i = 0; i < 50; i++)
      paths[`/late${pad(i)}`] = {
        post: { requestBody: json(ref('Outer')), responses: { '200': json(ref('Outer')) } },
      };
    doc = { openapi: '3.1.0', components: { schemas: expensiveComponents() }, paths };

    const before = discovery.discoveryNodesWalked();
    const seller = await register('Bounded Co');
    assert.equal(discovery.discoveryNodesWalked() - before, 0, 'no schema past the bound was walked');
    assert.equal(seller.ingest.added.length, 1000);
    assert.ok(seller.ingest.added.every((slug) => slug.startsWith('plain')));
  });

  it('shares one budget among all the schemas of a document; past it, operations are ingested without schemas', async () => {
    // `Wide` is a usable schema of ~500 nodes (about 7 KiB of JSON): input and output together ~1,000 per
    // operation, so 300 operations want ~300,000 nodes, past the document's budget.
    const wide = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`field${i}`, { type: 'integer' }]));
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++)
      paths[`/op${pad(i)}`] = {
        post: {
          operationId: `op${pad(i)}`,
          summary: `Operation ${i}`,
          'x-price-usd': '0.01',
          requestBody: json(ref('Wide')),
          responses: { '200': json(ref('Wide')) },
        },
      };
    doc = {
      openapi: '3.1.0',
      components: { schemas: { Wide: { type: 'object', properties: wide } } },
      paths,
    };

    const seller = await register('Wide Co');
    assert.equal(seller.ingest.added.length, 300, 'every operation is ingested');

    const rows = (await t.db
      .knex('endpoints')
      .where({ seller_id: seller.seller_id })
      .orderBy('path')
      .select('path', 'price_micro', 'priced', 'discovery')) as Array<{
      path: string;
      price_micro: string;
      priced: boolean;
      discovery: { description?: string; input_schema?: unknown; output_schema?: unknown } | null;
    }>;
    assert.equal(rows.length, 300);
    assert.ok(
      rows.every((r) => r.priced && r.price_micro === '10000'),
      'every operation stays priced',
    );
    assert.ok(
      rows.every((r, i) => r.discovery?.description === `Operation ${i}`),
      'descriptions are kept past the budget',
    );
    // Document order decides: the first ones keep both schemas; from the first without an output schema on
    // (which may still have its input schema), none has any.
    const cut = rows.findIndex((r) => r.discovery?.output_schema === undefined);
    assert.ok(cut >= 150 && cut < 300, `${cut} operations kept their schemas`);
    assert.ok(cut * 1000 <= discovery.MAX_DOCUMENT_NODES, 'no more than the budget allows');
    rows.slice(0, cut).forEach((r) => assert.ok(r.discovery?.input_schema && r.discovery.output_schema, r.path));
    rows
      .slice(cut + 1)
      .forEach((r) => assert.ok(!r.discovery?.input_schema && !r.discovery?.output_schema, `${r.path} has schemas`));
  });
});
