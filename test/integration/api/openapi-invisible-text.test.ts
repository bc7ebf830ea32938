/**
 * Text ingested from a seller's OpenAPI document is held to the same storable-text rule as text sent to a route
 * (isStorableText, src/api/http/schemas/common-schemas.ts, used by src/api/sellers/origin/openapi-discovery.ts):
 * a description holding a direction mark, a zero width space, a byte order mark, a line separator or a tag
 * character is left out (the operation is still ingested, and buyers see the generated description); a schema
 * holding one is left out; the joiners U+200C and U+200D are kept.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { openApiDocHandler } from '../../support/loopback-servers.js';

// Each in the middle of its text: descriptions are trimmed, and trim() already drops a leading BOM or separator.
const INVISIBLE = ['Acme\u200f', 'a\u2028b', 'x\u{e0041}', 'na\ufeffme', 'zero\u200bwidth', 'mark\u061c'];
const KEPT = 'می\u200cخواهم 👩\u200d💻';

describe('OpenAPI ingest: invisible and direction-changing text is not stored (HTTP, PostgreSQL)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  let server: http.Server;
  let url: string;
  const paths: Record<string, unknown> = {};
  INVISIBLE.forEach((text, i) => {
    paths[`/summary${i}`] = { get: { operationId: `summary${i}`, summary: text } };
    paths[`/schema${i}`] = {
      get: {
        operationId: `schema${i}`,
        summary: 'Schema',
        responses: { '200': { content: { 'application/json': { schema: { type: 'string', title: text } } } } },
      },
    };
  });
  paths['/kept'] = { get: { operationId: 'kept', summary: KEPT } };

  before(async () => {
    t = await startTestTreasury();
    server = http.createServer(openApiDocHandler(() => ({ openapi: '3.1.0', paths })));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/openapi.json`;
  });
  after(async () => {
    server?.close();
    await t?.stop();
  });

  it('leaves out descriptions and schemas holding them, keeps the operations and the joiners', async () => {
    const { session } = await signInWithNewKey(t);
    const res = await t.request('POST', '/v1/sellers', {
      token: session,
      body: { name: 'Ingest Co', openapi_url: url },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body).slice(0, 500));
    const rows = (await t.db
      .knex('endpoints')
      .where({ seller_id: res.body.seller_id })
      .select('path', 'discovery')) as Array<{
      path: string;
      discovery: { description?: string; output_schema?: unknown } | null;
    }>;
    const byPath = new Map(rows.map((r) => [r.path, r.discovery]));
    assert.equal(rows.length, INVISIBLE.length * 2 + 1, 'every operation is ingested');
    INVISIBLE.forEach((text, i) => {
      assert.equal(byPath.get(`/summary${i}`)?.description, undefined, JSON.stringify(text));
      assert.equal(byPath.get(`/schema${i}`)?.output_schema, undefined, JSON.stringify(text));
      assert.equal(byPath.get(`/schema${i}`)?.description, 'Schema');
    });
    assert.equal(byPath.get('/kept')?.description, KEPT);
  });
});
