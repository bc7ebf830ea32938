/**
 * The gate charges for exactly what it forwards (docs/security-model.md#the-gates-path-rule), through a real gate
 * in front of a real loopback origin that records every request line:
 * - a path that an origin would resolve to another route (`..\`, `%2e%2e`, `%2f`, a `;` path parameter that a
 *   servlet container cuts off, an escaped Unicode compatibility character) is refused (400 `gate_path_refused`)
 *   instead of priced as a free or cheap pattern and served as the paid route;
 * - of two patterns that fit, the dearer is charged — also when the request spells a pattern's literal text in
 *   another case (`/reports/x` for `/Reports/{id}`, as a case-insensitive origin routes it);
 * - an exact endpoint wins outright only when spelled as registered: another spelling of it (case, a trailing
 *   slash, an escape) is charged the dearest of it and the patterns that fit, since the origin receives that spelling;
 *   a pattern's free route price likewise frees only the spelling the seller configured;
 * - `/health` is charged when an endpoint of its method prices it, and otherwise passes as a bodiless GET or HEAD;
 * - OPTIONS (with a body) is answered by the gate and never forwarded;
 * - underscore spellings of payment and forwarding headers never reach the origin;
 * - a body over the cap answers 413 on every method, declared or chunked, before any payment is looked at.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import type { GateEndpoint } from '../../../src/shared/api-responses/gate-responses.js';
import {
  catalogueEndpoint,
  GATE_SLUG,
  startOrigin,
  startTestGate,
  tableCatalogue,
  type TestGate,
  type TestOrigin,
} from './gate-fakes.js';
import { rawExchange, type RawAnswer } from './raw-http.js';

/** A catalogue endpoint for a path pattern. */
function patternEndpoint(pattern: string, price: string, method = 'GET'): GateEndpoint {
  return { ...catalogueEndpoint(pattern, price), method, path_pattern: pattern };
}

const errorCode = (a: RawAnswer) => (JSON.parse(a.body) as { error_code?: string }).error_code;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

describe('gate: the path rule — what is priced is what is forwarded', function () {
  this.timeout(30_000);
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  let gate: TestGate;
  let catalogue: ReturnType<typeof tableCatalogue>;

  async function useCatalogue(endpoints: GateEndpoint[]): Promise<void> {
    catalogue.sellers[0]!.endpoints.push(...endpoints);
    platform.on('/v1/gate/catalogue', { status: 200, body: catalogue });
    await gate.app.catalogue.refreshNow();
  }

  /** Pays the challenge of `target` (raw) and sends it again with the payment; the challenge's amount too. */
  async function payRaw(target: string, method = 'GET'): Promise<{ amount: string; answer: RawAnswer }> {
    const challenged = await rawExchange(gate.url, { method, target });
    assert.equal(challenged.status, 402, `${target}: ${challenged.status} ${challenged.body}`);
    const accepted = (JSON.parse(challenged.body) as PaymentRequired).accepts[0]!;
    const header = encodePaymentPayload(await signExactPayment(accepted));
    const answer = await rawExchange(gate.url, { method, target, headers: { 'PAYMENT-SIGNATURE': header } });
    return { amount: accepted.amount, answer };
  }

  beforeEach(async () => {
    ({ facilitator, platform } = await startFakes());
    origin = await startOrigin();
    catalogue = tableCatalogue(origin.url);
    platform.on('/v1/gate/catalogue', { status: 200, body: catalogue });
    platform.on('/v1/gate/ledger', { status: 201, body: { id: 'led_1' } });
    gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url });
  });
  afterEach(async () => {
    await gate.stop();
    await Promise.all([origin.stop(), facilitator.stop(), platform.stop()]);
  });

  it('`..\\` under a free pattern is refused, not served as the paid route it resolves to', async () => {
    await useCatalogue([patternEndpoint('/public/{file}', '0'), catalogueEndpoint('/data', '1')]);
    for (const target of [`/${GATE_SLUG}/public/..\\data`, `/${GATE_SLUG}/public/..%5Cdata`]) {
      const res = await rawExchange(gate.url, { target });
      assert.equal(res.status, 400, `${target}: ${res.status} ${res.body}`);
      assert.equal(errorCode(res), 'gate_path_refused');
    }
    assert.equal(origin.runs, 0, `the origin was reached: ${origin.requests.map((r) => r.url).join(', ')}`);
    // The free pattern itself still passes, and the path arrives as written.
    const plain = await rawExchange(gate.url, { target: `/${GATE_SLUG}/public/report.txt` });
    assert.equal(plain.status, 200);
    assert.equal(origin.requests.at(-1)!.url, '/public/report.txt');
  });

  it('`%2e%2e` (any case) under a free pattern is refused, not resolved to the paid route', async () => {
    await useCatalogue([patternEndpoint('/assets/{dir}/{file}', '0'), catalogueEndpoint('/data', '1')]);
    for (const dots of ['%2e%2e', '%2E%2E', '.%2e', '%2e.'])
      for (const rest of [`/${dots}/data`, `/${dots}%2Fdata`]) {
        const target = `/${GATE_SLUG}/assets${rest}`;
        const res = await rawExchange(gate.url, { target });
        assert.equal(res.status, 400, `${target}: ${res.status} ${res.body}`);
        assert.equal(errorCode(res), 'gate_path_refused');
      }
    assert.equal(origin.runs, 0, `the origin was reached: ${origin.requests.map((r) => r.url).join(', ')}`);
  });

  it('a cheap pattern does not buy a dearer route: no traversal through it, and the dearer fitting pattern is charged', async () => {
    await useCatalogue([
      patternEndpoint('/cheap/{item}', '0.01'),
      patternEndpoint('/{section}/{id}', '0.01'),
      patternEndpoint('/reports/{id}', '3'),
    ]);
    const traversal = await rawExchange(gate.url, { target: `/${GATE_SLUG}/cheap/..\\premium` });
    assert.equal(traversal.status, 400, traversal.body);
    assert.equal(origin.runs, 0);
    // `/reports/q1` fits the older, cheaper `/{section}/{id}` and the dearer `/reports/{id}`: 3 USDC.
    const { amount, answer } = await payRaw(`/${GATE_SLUG}/reports/q1`);
    assert.equal(amount, '3000000');
    assert.equal(answer.status, 200, answer.body);
    assert.equal(origin.requests.at(-1)!.url, '/reports/q1');
  });

  it('a free exact endpoint is free only as spelled: other spellings pay the dearest fitting pattern', async () => {
    await useCatalogue([catalogueEndpoint('/reports/sample', '0'), patternEndpoint('/reports/{id}', '5')]);
    for (const spelling of ['/reports/SAMPLE', '/reports/Sample/', '/reports/s%41mple']) {
      const target = `/${GATE_SLUG}${spelling}`;
      const challenged = await rawExchange(gate.url, { target });
      assert.equal(challenged.status, 402, `${target}: ${challenged.status} ${challenged.body}`);
      assert.equal((JSON.parse(challenged.body) as PaymentRequired).accepts[0]!.amount, '5000000', target);
    }
    assert.equal(origin.runs, 0, `the origin was reached unpaid: ${origin.requests.map((r) => r.url).join(', ')}`);
    const { amount, answer } = await payRaw(`/${GATE_SLUG}/reports/SAMPLE`);
    assert.equal(amount, '5000000');
    assert.equal(answer.status, 200, answer.body);
    assert.equal(origin.requests.at(-1)!.url, '/reports/SAMPLE');
    // The exact spelling is the free endpoint.
    const free = await rawExchange(gate.url, { target: `/${GATE_SLUG}/reports/sample` });
    assert.equal(free.status, 200, free.body);
    assert.equal(free.headers['payment-response'], undefined);
    assert.equal(origin.requests.at(-1)!.url, '/reports/sample');
    assert.equal(origin.runs, 2);
  });

  it('a `;` path parameter or an escaped compatibility character is refused, not priced as a cheaper segment', async () => {
    await useCatalogue([
      patternEndpoint('/{page}', '0.01'),
      catalogueEndpoint('/items/premium', '1'),
      patternEndpoint('/items/{id}', '0'),
    ]);
    for (const path of [
      '/items/premium;v=1',
      '/items/premium;',
      '/premium;jsessionid=1',
      '/items/premium%3Bv=1',
      '/%EF%BD%90remium',
      '/items/%EF%BD%90remium',
    ]) {
      const res = await rawExchange(gate.url, { target: `/${GATE_SLUG}${path}` });
      assert.equal(res.status, 400, `${path}: ${res.status} ${res.body}`);
      assert.equal(errorCode(res), 'gate_path_refused', path);
    }
    assert.equal(origin.runs, 0, `the origin was reached: ${origin.requests.map((r) => r.url).join(', ')}`);
    // A `;` in the query is no path parameter: the free pattern passes, the target arrives as written.
    const query = await rawExchange(gate.url, { target: `/${GATE_SLUG}/items/x?a=1;b=2` });
    assert.equal(query.status, 200, query.body);
    assert.equal(origin.requests.at(-1)!.url, '/items/x?a=1;b=2');
    const { amount } = await payRaw(`/${GATE_SLUG}/premium`);
    assert.equal(amount, '2500000');
  });

  it("a pattern's literal text in another case is charged that pattern, not a cheaper broad one", async () => {
    await useCatalogue([patternEndpoint('/{section}/{id}', '0'), patternEndpoint('/Reports/{id}', '5')]);
    for (const path of ['/Reports/x', '/reports/x', '/REPORTS/x']) {
      const challenged = await rawExchange(gate.url, { target: `/${GATE_SLUG}${path}` });
      assert.equal(challenged.status, 402, `${path}: ${challenged.status} ${challenged.body}`);
      assert.equal((JSON.parse(challenged.body) as PaymentRequired).accepts[0]!.amount, '5000000', path);
    }
    assert.equal(origin.runs, 0, `the origin was reached unpaid: ${origin.requests.map((r) => r.url).join(', ')}`);
    const free = await rawExchange(gate.url, { target: `/${GATE_SLUG}/other/x` });
    assert.equal(free.status, 200, free.body);
  });

  it("a pattern's free route price frees the configured spelling only; other spellings pay the pattern", async () => {
    await useCatalogue([{ ...patternEndpoint('/reports/{id}', '5'), route_prices: { '/reports/sample': '0' } }]);
    for (const spelling of ['/reports/SAMPLE', '/reports/Sample/', '/reports/s%41mple', '/reports/sample/']) {
      const target = `/${GATE_SLUG}${spelling}`;
      const challenged = await rawExchange(gate.url, { target });
      assert.equal(challenged.status, 402, `${target}: ${challenged.status} ${challenged.body}`);
      assert.equal((JSON.parse(challenged.body) as PaymentRequired).accepts[0]!.amount, '5000000', target);
    }
    assert.equal(origin.runs, 0, `the origin was reached unpaid: ${origin.requests.map((r) => r.url).join(', ')}`);
    const free = await rawExchange(gate.url, { target: `/${GATE_SLUG}/reports/sample` });
    assert.equal(free.status, 200, free.body);
    assert.equal(origin.requests.at(-1)!.url, '/reports/sample');
  });

  it('`/health` priced by an endpoint of its method is charged; unpriced it passes as a bodiless GET or HEAD', async () => {
    const unpriced = await rawExchange(gate.url, { target: `/${GATE_SLUG}/health` });
    assert.equal(unpriced.status, 200, unpriced.body);
    assert.equal(origin.runs, 1);
    await useCatalogue([catalogueEndpoint('/health', '0.05')]);
    for (const method of ['GET', 'HEAD']) {
      const res = await rawExchange(gate.url, { method, target: `/${GATE_SLUG}/health` });
      assert.equal(res.status, 402, `${method}: ${res.status} ${res.body}`);
    }
    assert.equal(origin.runs, 1, `the origin was reached unpaid: ${origin.requests.map((r) => r.url).join(', ')}`);
    const { amount, answer } = await payRaw(`/${GATE_SLUG}/health`);
    assert.equal(amount, '50000');
    assert.equal(answer.status, 200, answer.body);
    assert.equal(origin.runs, 2);
    // Priced for GET only: a POST to it is no endpoint, and no probe either.
    const post = await rawExchange(gate.url, { method: 'POST', target: `/${GATE_SLUG}/health`, body: 'x' });
    assert.equal(post.status, 404);
    assert.equal(origin.runs, 2);
  });

  it('OPTIONS, with a body, is answered by the gate (CORS preflight) and never forwarded', async () => {
    await useCatalogue([{ ...catalogueEndpoint('/paid', '0.01'), method: 'POST' }]);
    const preflight = await rawExchange(gate.url, {
      method: 'OPTIONS',
      target: `/${GATE_SLUG}/paid`,
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' },
      body: '{"smuggled":"work"}',
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.allow, 'GET, HEAD, POST, OPTIONS');
    assert.equal(preflight.headers['access-control-allow-origin'], '*');
    assert.match(preflight.headers['access-control-expose-headers'] ?? '', /payment-response/);
    const chunked = await rawExchange(gate.url, {
      method: 'OPTIONS',
      target: `/${GATE_SLUG}/paid`,
      body: 'more work',
      chunked: true,
    });
    assert.equal(chunked.status, 204);
    const elsewhere = await rawExchange(gate.url, { method: 'OPTIONS', target: `/${GATE_SLUG}/anything`, body: 'x' });
    assert.equal(elsewhere.status, 404);
    assert.equal(errorCode(elsewhere), 'gate_endpoint_not_found');
    assert.equal(origin.runs, 0, `the origin was reached: ${origin.requests.map((r) => r.method).join(', ')}`);
    assert.equal(facilitator.calls.length, 0);
  });

  it('underscore spellings of payment and forwarding headers are stripped like the dashed ones', async () => {
    const challenge = (await (await fetch(`${gate.url}/${GATE_SLUG}/paid`)).json()) as PaymentRequired;
    const header = encodePaymentPayload(await signExactPayment(challenge.accepts[0]!));
    const res = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        `${gate.url}/${GATE_SLUG}/paid`,
        {
          headers: {
            'PAYMENT-SIGNATURE': header,
            X_PAYMENT: header,
            Payment_Signature: header,
            x_Payment_Extra: 'also-a-payment-header',
            X_Forwarded_For: '6.6.6.6',
            Connection: 'close, X_Hop_Secret',
            'X-Hop-Secret': 'must-not-cross',
            Transfer_Encoding: 'chunked',
            'X-Kept': 'yes',
          },
        },
        (r) => {
          r.resume();
          r.on('end', () => resolve(r.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(res, 200);
    const seen = origin.requests.at(-1)!;
    for (const name of Object.keys(seen.headers))
      assert.ok(!/payment/i.test(name), `payment header ${name} reached the origin`);
    for (const name of ['x_forwarded_for', 'x-hop-secret', 'transfer_encoding'])
      assert.equal(seen.headers[name], undefined, `${name} crossed`);
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen.headers['x-kept'], 'yes');
  });

  it('a body over the cap answers 413 on every method, declared or chunked, before any payment is looked at', async () => {
    await gate.stop();
    gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url, GATE_MAX_REQUEST_BYTES: '16' });
    await useCatalogue([
      ...METHODS.filter((m) => m !== 'HEAD').map((m) => ({ ...catalogueEndpoint('/echo', '0.01'), method: m })),
      { ...catalogueEndpoint('/free', '0'), method: 'PUT' },
    ]);
    const big = 'x'.repeat(64);
    for (const method of METHODS)
      for (const chunked of [false, true]) {
        const res = await rawExchange(gate.url, { method, target: `/${GATE_SLUG}/echo`, body: big, chunked });
        assert.equal(res.status, 413, `${method} ${chunked ? 'chunked' : 'declared'}: ${res.status} ${res.body}`);
      }
    assert.equal(origin.runs, 0, `the origin was reached: ${origin.requests.map((r) => r.method).join(', ')}`);
    assert.equal(facilitator.calls.length, 0);
    // Under the cap, a chunked body arrives whole, with its length.
    const small = await rawExchange(gate.url, {
      method: 'PUT',
      target: `/${GATE_SLUG}/free`,
      body: 'tiny',
      chunked: true,
    });
    assert.equal(small.status, 200, small.body);
    const seen = origin.requests.at(-1)!;
    assert.deepEqual([seen.method, seen.body, seen.headers['content-length']], ['PUT', 'tiny', '4']);
    assert.equal(seen.headers['transfer-encoding'], undefined);
  });
});
