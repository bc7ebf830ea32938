/**
 * GET /v1/openapi.json: generated from the zod schemas and complete — every route the app serves is in it,
 * and nothing else is (the app's routers walked); it passes an OpenAPI 3.1 validator
 * (@apidevtools/swagger-parser) and the checks a validator leaves out (unique camelCase operationIds, declared
 * path parameters, known security schemes, a success reply and error envelopes on every operation); request
 * bodies carry the JSON Schema of the route's validator, paged lists their query, pay and transfer the
 * Idempotency-Key header. GET /docs renders it with Swagger UI under a strict CSP, its script and style from
 * this origin and no inline script.
 */
import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import { useTestTreasury } from '../../support/api-harness.js';
import { fetchEach } from '../../support/fetch-each.js';

type ApiDocument = Extract<Parameters<typeof SwaggerParser.validate>[0], object>;

type Operation = {
  operationId: string;
  security: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema: any }> }>;
};

describe('GET /v1/openapi.json', function () {
  this.timeout(60_000);
  const t = useTestTreasury();
  let doc: any;
  const operations = () =>
    Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op })),
    );

  before(async () => {
    const res = await t.request('GET', '/v1/openapi.json');
    assert.equal(res.status, 200);
    doc = res.body;
  });

  it('documents exactly the routes the app serves, with request schemas', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const documented = operations()
      .map(({ path, method }) => `${method.toUpperCase()} ${path}`)
      .sort();
    const served = [...new Set(t.app.routes.map((r) => `${r.method} ${r.path}`))].sort();
    assert.deepEqual(documented, served);
    const pay = doc.paths['/v1/wallets/{id}/pay'].post;
    const schema = pay.requestBody.content['application/json'].schema;
    assert.deepEqual(schema.required, ['payment_requirements']);
    assert.ok(schema.properties.payment_requirements.properties.maxTimeoutSeconds);
    assert.equal(pay.parameters[0].name, 'id');
    assert.equal(doc.paths['/v1/identity/nonce'].post.security.length, 0);
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
      const query = (doc.paths[path].get.parameters as Array<{ name: string; in: string }>)
        .filter((p) => p.in === 'query')
        .map((p) => p.name);
      assert.ok(query.includes('limit') && query.includes('cursor'), `${path}: ${query.join(', ')}`);
    }
  });

  it('passes the OpenAPI 3.1 validator, which refuses a broken copy', async () => {
    await SwaggerParser.validate(structuredClone(doc) as ApiDocument);
    const broken = structuredClone(doc);
    broken.paths['/v1/wallets'].get.responses['401'].content['application/json'].schema.allOf[0].$ref =
      '#/components/schemas/Nope';
    await assert.rejects(SwaggerParser.validate(broken as ApiDocument), /Nope/);
  });

  it('names every operation once, in camelCase, and declares its path parameters and bearer kinds', () => {
    const ids = operations().map(({ op }) => op.operationId);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    for (const id of ids) assert.match(id, /^[a-z][a-zA-Z0-9]*$/, id);
    const schemes = new Set(Object.keys(doc.components.securitySchemes));
    for (const { path, method, op } of operations()) {
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      const inPath = [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
      assert.deepEqual(declared, inPath, `${method} ${path}: path parameters`);
      for (const requirement of op.security)
        for (const name of Object.keys(requirement)) assert.ok(schemes.has(name), `${method} ${path}: ${name}`);
    }
    const of = (path: string, method: string) => doc.paths[path][method] as Operation;
    const schemesOf = (op: Operation) => op.security.flatMap((r) => Object.keys(r)).sort();
    assert.deepEqual(schemesOf(of('/v1/ledger', 'post')), ['servicePat']);
    assert.deepEqual(schemesOf(of('/v1/treasury', 'post')), ['operatorToken']);
    assert.deepEqual(schemesOf(of('/v1/pats', 'post')), ['session']);
    assert.deepEqual(schemesOf(of('/v1/wallets/{id}/pay', 'post')), ['agentPat', 'session', 'treasuryToken']);
    assert.deepEqual(schemesOf(of('/livez', 'get')), []);
  });

  it('gives every operation a success reply and its errors as the error envelope, per status', () => {
    for (const { path, method, op } of operations()) {
      const statuses = Object.keys(op.responses);
      const success = statuses.filter((s) => s.startsWith('2'));
      assert.ok(success.length > 0, `${method} ${path}: no success reply`);
      for (const s of success)
        assert.ok(s === '204' || op.responses[s]!.content, `${method} ${path} ${s}: a success reply without a body`);
      assert.ok(statuses.includes('500'), `${method} ${path}: no 500`);
      for (const s of statuses.filter((x) => Number(x) >= 400 && !(path === '/readyz' && x === '503'))) {
        const schema = op.responses[s]!.content!['application/json']!.schema;
        assert.equal(schema.allOf[0].$ref, '#/components/schemas/Error', `${method} ${path} ${s}`);
        assert.ok(schema.allOf[1].properties.error_code.enum.length > 0, `${method} ${path} ${s}`);
      }
      if (op.requestBody) assert.ok(statuses.includes('400') && statuses.includes('413'), `${method} ${path}`);
      if (op.security.length > 0) assert.ok(statuses.includes('401'), `${method} ${path}: no 401`);
    }
    assert.deepEqual(doc.components.schemas.Error.required, ['error_code', 'user_message', 'request_id']);
    const payReply = doc.paths['/v1/wallets/{id}/pay'].post.responses['200'].content['application/json'].schema;
    assert.ok(payReply.anyOf[0].properties.signature.pattern, 'the signed payment reply is described');
    const pay409 = doc.paths['/v1/wallets/{id}/pay'].post.responses['409'].content['application/json'].schema;
    assert.ok(pay409.allOf[1].properties.error_code.enum.includes('idempotency_key_conflict'));
  });

  it('documents the Idempotency-Key header on exactly the routes that honour it', () => {
    const withKey = operations()
      .filter(({ op }) => (op.parameters ?? []).some((p) => p.in === 'header' && p.name === 'Idempotency-Key'))
      .map(({ op }) => op.operationId)
      .sort();
    assert.deepEqual(withKey, ['flushSellerPayouts', 'payFromWallet', 'transferFromWallet']);
  });
});

describe('GET /docs: the rendered reference', function () {
  this.timeout(60_000);
  const t = useTestTreasury();

  const cspOf = (headers: Headers) => {
    const csp = headers.get('content-security-policy') ?? '';
    return new Map(
      csp.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name!, values] as const;
      }),
    );
  };

  it('serves the page and its assets from this origin under a strict CSP, with no inline script', async () => {
    const page = await fetch(`${t.baseUrl}/docs`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const csp = cspOf(page.headers);
    assert.deepEqual(csp.get('default-src'), ["'none'"]);
    assert.deepEqual(csp.get('script-src'), ["'self'"], 'scripts from this origin only: no inline, no eval');
    assert.deepEqual(csp.get('connect-src'), ["'self'"]);
    assert.deepEqual(csp.get('frame-ancestors'), ["'none'"]);
    assert.deepEqual(csp.get('base-uri'), ["'none'"]);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    const html = await page.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.ok(scripts.length >= 2);
    for (const [, attrs, body] of scripts) {
      assert.match(attrs!, /\ssrc="\/docs\/[a-z0-9.-]+"/, `a script from this origin: ${attrs}`);
      assert.equal(body!.trim(), '', 'no inline script');
    }
    assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline event handler');
    assert.doesNotMatch(html, /<style|\sstyle=/i, 'no inline style');

    const assets = [...html.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(assets.sort(), [
      '/docs/favicon-32x32.png',
      '/docs/init.js',
      '/docs/swagger-ui-bundle.js',
      '/docs/swagger-ui.css',
    ]);
    for (const asset of assets) {
      const res = await fetch(t.baseUrl + asset);
      assert.equal(res.status, 200, asset);
      assert.ok(cspOf(res.headers).get('script-src'), `${asset}: CSP`);
      const type = res.headers.get('content-type') ?? '';
      const expected = asset.endsWith('.js')
        ? /^text\/javascript/
        : asset.endsWith('.css')
          ? /^text\/css/
          : /^image\/png/;
      assert.match(type, expected, asset);
      const body = Buffer.from(await res.arrayBuffer());
      assert.ok(body.length > 0, asset);
      if (asset === '/docs/init.js') {
        const text = body.toString('utf8');
        assert.ok(text.includes("url: '/v1/openapi.json'"), 'the initializer points at the document');
        assert.ok(text.includes('validatorUrl: null'), 'no call to a third-party validator');
      }
    }
  });

  it('answers 404 for anything that is not one of its assets', async () => {
    for await (const [path, res] of fetchEach(t.baseUrl, [
      '/docs/index.html',
      '/docs/swagger-ui-bundle.js.map',
      '/docs/..%2Fpackage.json',
      '/docs/%2E%2E%2F%2E%2E%2Fpackage.json',
      '/docs/constructor',
      '/docs/__proto__',
    ])) {
      assert.equal(res.status, 404, path);
      assert.equal(((await res.json()) as { error_code?: string }).error_code, 'not_found', path);
    }
  });
});
