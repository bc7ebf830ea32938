/**
 * OpenAPI ingest is bounded per document, not only per schema (src/api/sellers/origin/openapi-discovery.ts):
 * operations past the first 1,000 are never looked at, and the schemas of all the kept ones draw on one node
 * budget and one byte budget (what is stored, MAX_DISCOVERY_BYTES_PER_DOCUMENT) — past either, operations are
 * still ingested (priced, described) but without schemas; an operation kept for its ledger rows once gone from
 * the document loses its discovery, so a seller's stored discovery is one document's. Asserted on the work
 * counted (nodes walked) and on what is stored, never on time.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import * as discovery from '../../../src/api/sellers/origin/openapi-discovery.js';
import { jsonbTextBytes } from '../../../src/api/sellers/origin/jsonb-text-bytes.js';
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

describe('OpenAPI ingest: one node budget and one byte budget per document (HTTP, PostgreSQL)', function () {
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

  async function register(
    name: string,
  ): Promise<{ seller_id: string; pat: string; payer: string; ingest: { added: string[] } }> {
    const { session, address } = await signInWithNewKey(t);
    const res = await t.request('POST', '/v1/sellers', { token: session, body: { name, openapi_url: url } });
    assert.equal(res.status, 201, JSON.stringify(res.body).slice(0, 500));
    return { ...res.body, payer: address };
  }

  /** The seller's rows: path, stored discovery and its size as stored (jsonb text), in path order. */
  async function storedDiscovery(sellerId: string) {
    return (await t.db
      .knex('endpoints')
      .where({ seller_id: sellerId })
      .orderBy('path')
      .select('id', 'path', 'discovery', t.db.knex.raw('octet_length(discovery::text) AS bytes'))) as Array<{
      id: string;
      path: string;
      discovery: { description?: string; input_schema?: unknown; output_schema?: unknown } | null;
      bytes: number | null;
    }>;
  }
  const total = (rows: Array<{ bytes: number | null }>) => rows.reduce((n, r) => n + (r.bytes ?? 0), 0);

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
    // `Wide` is a usable schema of ~500 nodes (about 1.5 KiB as stored, so the node budget is what this document
    // spends, not the byte budget): input and output together ~1,000 per operation, so 300 operations want
    // ~300,000 nodes, past the document's budget.
    const wide = { type: 'array', items: { enum: Array.from({ length: 495 }, () => 0) } };
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
      components: { schemas: { Wide: wide } },
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

  it('stores at most 1 MiB of discovery per document: one 16,000-character schema named twice by 1,000 operations', async () => {
    // ~100 KB of document; inlined, each operation would store ~32 KB (~32 MB for the seller).
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 1000; i++)
      paths[`/big${pad(i)}`] = {
        post: {
          operationId: `big${pad(i)}`,
          summary: `Big ${i}`,
          'x-price-usd': '0.01',
          requestBody: json(ref('Big')),
          responses: { '200': json(ref('Big')) },
        },
      };
    const big = { type: 'string', description: randomBytes(8000).toString('hex') };
    doc = { openapi: '3.1.0', components: { schemas: { Big: big } }, paths };

    const seller = await register('Big Co');
    assert.equal(seller.ingest.added.length, 1000, 'every operation is ingested');
    const rows = await storedDiscovery(seller.seller_id);
    assert.ok(
      total(rows) <= discovery.MAX_DISCOVERY_BYTES_PER_DOCUMENT,
      `${total(rows)} bytes of discovery stored for one seller`,
    );
    assert.ok(
      rows.every((r, i) => r.discovery?.description === `Big ${i}`),
      'descriptions are kept past the budget',
    );
    // Document order decides: the first ones keep both schemas, whole; from the first without one on, none has any.
    const cut = rows.findIndex((r) => r.discovery?.output_schema === undefined);
    assert.ok(cut >= 20 && cut < 30, `${cut} operations kept their schemas`);
    rows.slice(0, cut).forEach((r) => assert.deepEqual(r.discovery?.input_schema, big, r.path));
    rows.slice(cut + 1).forEach((r) => assert.ok(!r.discovery?.input_schema, `${r.path} has schemas`));

    // A refresh of the same document changes nothing and stores no more.
    const again = await t.request('POST', `/v1/sellers/${seller.seller_id}/refresh`, { token: seller.pat });
    assert.equal(again.status, 200, JSON.stringify(again.body).slice(0, 500));
    assert.deepEqual([again.body.added, again.body.changed, again.body.unchanged], [[], [], 1000]);
    assert.equal(total(await storedDiscovery(seller.seller_id)), total(rows));
  });

  it('counts each operation as PostgreSQL stores it (jsonb text: spaces, numbers written out, escapes, UTF-8)', async () => {
    const schemas = [
      { type: 'number', maximum: 1e300, minimum: -1.5e-7, default: 1e21, multipleOf: 0.01 },
      { type: 'object', properties: { 'q"\\': { type: 'string', enum: ['é', '😀', 'a/b', null, true, false, []] } } },
      { type: 'array', items: { type: 'integer', examples: [0, -0, 12345678901234567890, 2.5e-10] }, minItems: 1 },
      {},
    ];
    const ops = schemas.map((schema, i) => ({
      operationId: `exact${i}`,
      summary: `Exact «${i}» "quoted"`,
      requestBody: json(schema),
      responses: { '200': json({ $ref: '#/components/schemas/Shared' }) },
    }));
    const components = { schemas: { Shared: { type: 'object', properties: { id: { type: 'string' } } } } };
    doc = { openapi: '3.1.0', components, paths: Object.fromEntries(ops.map((op, i) => [`/exact${i}`, { post: op }])) };

    const seller = await register('Exact Co');
    const rows = await storedDiscovery(seller.seller_id);
    assert.equal(rows.length, ops.length);
    rows.forEach((r, i) => {
      assert.ok(r.discovery?.input_schema && r.discovery.output_schema, `${r.path} keeps its schemas`);
      const budget = discovery.documentBudget();
      discovery.discoveryOfOperation(doc, 'post', ops[i]!, budget);
      assert.equal(discovery.MAX_DISCOVERY_BYTES_PER_DOCUMENT - budget.bytesLeft, r.bytes, `${r.path} charged`);
      assert.equal(jsonbTextBytes(r.discovery), r.bytes, `${r.path} measured`);
    });
  });

  it('an operation gone from the document but kept for its ledger rows loses its discovery', async () => {
    doc = {
      openapi: '3.1.0',
      paths: {
        '/kept': { get: { operationId: 'kept', summary: 'Kept for its ledger rows', 'x-price-usd': '0.01' } },
      },
    };
    const seller = await register('Kept Co');
    const [row] = await storedDiscovery(seller.seller_id);
    assert.equal(row?.discovery?.description, 'Kept for its ledger rows');
    const reported = await t.request('POST', '/v1/ledger', {
      token: seller.pat,
      body: {
        tx_hash: `0x${randomBytes(32).toString('hex')}`,
        payer: seller.payer,
        amount: '10000',
        network: 'eip155:84532',
        endpoint_id: row!.id,
      },
    });
    assert.ok(reported.status < 300, JSON.stringify(reported.body));

    doc = { openapi: '3.1.0', paths: {} };
    const refreshed = await t.request('POST', `/v1/sellers/${seller.seller_id}/refresh`, { token: seller.pat });
    assert.deepEqual(refreshed.body.kept_for_ledger, ['kept'], JSON.stringify(refreshed.body));
    assert.deepEqual(
      (await storedDiscovery(seller.seller_id)).map((r) => [r.path, r.discovery]),
      [['/kept', null]],
    );
  });
});
