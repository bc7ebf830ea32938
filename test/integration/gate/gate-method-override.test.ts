/**
 * The gate prices the method on the request line, so it must be the method the origin runs: Rails
 * (Rack::MethodOverride), Laravel, express's `method-override` and Spring's HiddenHttpMethodFilter run
 * `POST /items` carrying `X-HTTP-Method-Override: DELETE` or `_method=DELETE` as `DELETE /items`. Through a real
 * gate in front of a recording origin, with a free POST and a priced DELETE and PUT on one path:
 * - an override header naming another method, or a `_method` parameter in the query, a form, multipart or JSON
 *   body (however its name is spelled: any case, escaped, `.method`, `_method[]`) is refused — 400
 *   `gate_method_override_refused` — and nothing reaches the origin;
 * - an override header naming the request's own method, and parameters that only look alike (`method`,
 *   `my_method`, `_method` as a value or a file name), pass as sent.
 */
import assert from 'node:assert/strict';
import type { GateEndpoint } from '../../../src/shared/api-responses/gate-responses.js';
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
import { rawExchange, type RawRequest } from './raw-http.js';

const endpoint = (method: string, price: string): GateEndpoint => ({ ...catalogueEndpoint('/items', price), method });
const errorCode = (body: string) => (JSON.parse(body) as { error_code?: string }).error_code;
const FORM = 'application/x-www-form-urlencoded';
const BOUNDARY = 'gate-test-boundary';

/** A multipart/form-data body of `parts` (Content-Disposition parameters, value). */
function multipart(parts: Array<[string, string]>): string {
  const body = parts.map(
    ([disposition, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; ${disposition}\r\n\r\n${value}\r\n`,
  );
  return `${body.join('')}--${BOUNDARY}--\r\n`;
}
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

describe('gate: a method override is refused, not sold as the cheaper method', function () {
  this.timeout(30_000);
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  let gate: TestGate;

  before(async () => {
    ({ facilitator, platform } = await startFakes());
    origin = await startOrigin();
    const catalogue = tableCatalogue(origin.url, {
      endpoints: [endpoint('POST', '0'), endpoint('DELETE', '5'), endpoint('PUT', '5')],
    });
    platform.on('/v1/gate/catalogue', { status: 200, body: catalogue });
    gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url });
  });
  after(async () => {
    await gate.stop();
    await Promise.all([origin.stop(), facilitator.stop(), platform.stop()]);
  });

  const post = (query: string, headers: Record<string, string> = {}, body?: string): RawRequest => ({
    method: 'POST',
    target: `/${GATE_SLUG}/items${query}`,
    headers,
    ...(body === undefined ? {} : { body }),
  });

  it('the priced DELETE is challenged; the free POST passes', async () => {
    assert.equal((await rawExchange(gate.url, { method: 'DELETE', target: `/${GATE_SLUG}/items` })).status, 402);
    const free = await rawExchange(gate.url, post('', { 'Content-Type': FORM }, 'a=1'));
    assert.equal(free.status, 200, free.body);
    assert.equal(origin.requests.at(-1)!.method, 'POST');
  });

  it('an override header naming another method is refused; naming the request’s own method passes', async () => {
    const before = origin.runs;
    for (const [name, value] of [
      ['X-HTTP-Method-Override', 'DELETE'],
      ['X-HTTP-Method', 'delete'],
      ['X-Method-Override', 'PUT'],
      ['X_HTTP_Method_Override', 'DELETE'],
      ['x-http-method-override', 'POST, DELETE'],
    ] as const) {
      const res = await rawExchange(gate.url, post('', { [name]: value }));
      assert.equal(res.status, 400, `${name}: ${value} → ${res.status} ${res.body}`);
      assert.equal(errorCode(res.body), 'gate_method_override_refused');
    }
    assert.equal(origin.runs, before, 'an override reached the origin');
    const same = await rawExchange(gate.url, post('', { 'X-HTTP-Method-Override': 'post' }));
    assert.equal(same.status, 200, same.body);
    assert.equal(origin.requests.at(-1)!.headers['x-http-method-override'], 'post');
  });

  it('a `_method` query parameter, however spelled, is refused', async () => {
    const before = origin.runs;
    for (const query of [
      '?_method=DELETE',
      '?_METHOD=delete',
      '?%5Fmethod=DELETE',
      '?_meth%6Fd=PUT',
      '?a=1;_method=DELETE',
      '?a=1&_method',
      '?.method=DELETE',
      '?_method%5B%5D=DELETE',
      '?+_method=DELETE',
    ]) {
      const res = await rawExchange(gate.url, post(query));
      assert.equal(res.status, 400, `${query} → ${res.status} ${res.body}`);
      assert.equal(errorCode(res.body), 'gate_method_override_refused', query);
    }
    // Refused on every method, the free and the priced alike, before any price is looked at.
    const onDelete = await rawExchange(gate.url, { method: 'DELETE', target: `/${GATE_SLUG}/items?_method=POST` });
    assert.equal(onDelete.status, 400);
    assert.equal(origin.runs, before, 'an override reached the origin');
  });

  it('a `_method` field in a form, multipart or JSON body is refused', async () => {
    const before = origin.runs;
    const bodies: Array<[string | undefined, string]> = [
      [FORM, '_method=DELETE'],
      [`${FORM}; charset=utf-8`, 'a=1&%5Fmethod=PUT'],
      [undefined, 'a=1&_method=DELETE'],
      [
        MULTIPART,
        multipart([
          ['name="a"', '1'],
          ['name="_method"', 'DELETE'],
        ]),
      ],
      [MULTIPART, multipart([['name=_METHOD', 'DELETE']])],
      [MULTIPART, multipart([["name*=utf-8''%5Fmethod", 'DELETE']])],
      ['application/json', '{"a":1,"_method":"DELETE"}'],
      ['application/vnd.api+json', '{"\\u005fmethod":"PUT"}'],
    ];
    for (const [type, body] of bodies) {
      const res = await rawExchange(gate.url, post('', type ? { 'Content-Type': type } : {}, body));
      assert.equal(res.status, 400, `${type} ${body} → ${res.status} ${res.body}`);
      assert.equal(errorCode(res.body), 'gate_method_override_refused', `${type} ${body}`);
    }
    assert.equal(origin.runs, before, 'an override reached the origin');
  });

  it('parameters that only look alike pass as sent', async () => {
    const passing: Array<[string, string | undefined, string | undefined]> = [
      ['?method=DELETE&my_method=PUT&x=_method', undefined, undefined],
      ['', FORM, 'name=_method&method=DELETE'],
      ['', MULTIPART, multipart([['name="file"; filename="_method.txt"', '_method=DELETE']])],
      ['', 'application/json', '{"method":"DELETE","data":{"_method":"PUT"}}'],
      ['', 'text/plain', '_method=DELETE'],
    ];
    for (const [query, type, body] of passing) {
      const res = await rawExchange(gate.url, post(query, type ? { 'Content-Type': type } : {}, body));
      assert.equal(res.status, 200, `${query} ${type} ${body} → ${res.status} ${res.body}`);
      const seen = origin.requests.at(-1)!;
      assert.deepEqual([seen.method, seen.url, seen.body], ['POST', `/items${query}`, body ?? '']);
    }
  });
});
