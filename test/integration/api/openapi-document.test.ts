/**
 * GET /v1/openapi.json: generated from the zod schemas and complete — every route the app serves is in it,
 * and nothing else is; request bodies carry the JSON Schema of the route's validator, paged lists their query.
 */
import assert from 'node:assert/strict';
import { useTestTreasury } from '../../support/api-harness.js';

describe('GET /v1/openapi.json', function () {
  this.timeout(60_000);
  const t = useTestTreasury();

  it('documents exactly the routes the app serves, with request schemas', async () => {
    const res = await t.request('GET', '/v1/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    const documented = Object.entries(res.body.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    const served = [...new Set(t.app.routes.map((r) => `${r.method} ${r.path}`))].sort();
    assert.deepEqual(documented, served);
    const pay = res.body.paths['/v1/wallets/{id}/pay'].post;
    const schema = pay.requestBody.content['application/json'].schema;
    assert.deepEqual(schema.required, ['payment_requirements']);
    assert.ok(schema.properties.payment_requirements.properties.maxTimeoutSeconds);
    assert.equal(pay.parameters[0].name, 'id');
    assert.equal(res.body.paths['/v1/identity/nonce'].post.security.length, 0);
    // Every paged list documents its limit and cursor.
    for (const path of [
      '/v1/wallets',
      '/v1/ledger',
      '/v1/agents',
      '/v1/pats',
      '/v1/sellers',
      '/v1/sellers/{id}/endpoints',
      '/v1/sellers/{id}/payouts',
      '/v1/sellers/{id}/pats',
    ]) {
      const query = (res.body.paths[path].get.parameters as Array<{ name: string; in: string }>)
        .filter((p) => p.in === 'query')
        .map((p) => p.name);
      assert.ok(query.includes('limit') && query.includes('cursor'), `${path}: ${query.join(', ')}`);
    }
  });
});
