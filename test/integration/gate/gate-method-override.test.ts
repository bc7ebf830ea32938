/**
 * The gate prices the method on the request line, so it must be the method the origin runs: Rails
 * (Rack::MethodOverride), Laravel, express's `method-override` and Spring's HiddenHttpMethodFilter run
 * `POST /items` carrying `X-HTTP-Method-Override: DELETE` or `_method=DELETE` as `DELETE /items`. Through a real
 * gate in front of a recording origin, with a free POST and a priced DELETE and PUT on one path:
 * - an override header naming another method, or a `_method` parameter in the query, a form, multipart or JSON
 *   body (however its name is spelled: any case, escaped, `.method`, `_method[]`) is refused — 400
 *   `gate_method_override_refused` — and nothing reaches the origin;
 * - what an origin would read otherwise than the gate is refused too, decided on the headers that cross: a
 *   Connection header hiding Content-Type (a), two media types (b), a multipart boundary Rack or PHP read another
 *   way (c), any `multipart/*` (d), a type naming json anywhere (e, Laravel), a multipart part head Rack or PHP
 *   split into other headers than the gate (f), any other POST body read as a form;
 * - an override header naming the request's own method, and parameters that only look alike (`method`,
 *   `my_method`, `_method` as a value or a file name), pass as sent; so do plain JSON, form and upload bodies.
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
    ];
    for (const [query, type, body] of passing) {
      const res = await rawExchange(gate.url, post(query, type ? { 'Content-Type': type } : {}, body));
      assert.equal(res.status, 200, `${query} ${type} ${body} → ${res.status} ${res.body}`);
      const seen = origin.requests.at(-1)!;
      assert.deepEqual([seen.method, seen.url, seen.body], ['POST', `/items${query}`, body ?? '']);
    }
  });

  /** Each request is refused with the override code and none reaches the origin (every one that is not, listed). */
  async function assertRefused(requests: RawRequest[]): Promise<void> {
    const before = origin.runs;
    const passed: string[] = [];
    for (const request of requests) {
      const res = await rawExchange(gate.url, request);
      if (res.status !== 400 || errorCode(res.body) !== 'gate_method_override_refused')
        passed.push(`${JSON.stringify(request.headers)} ${JSON.stringify(request.body)} → ${res.status}`);
    }
    assert.deepEqual(passed, [], 'not refused');
    assert.equal(origin.runs, before, 'an override reached the origin');
  }

  /** A multipart body of `parts` (each part's header lines, value) under `boundary`, as sent. */
  const parts = (boundary: string, list: Array<[string, string]>, close = `--${boundary}--\r\n`) =>
    list.map(([head, value]) => `--${boundary}\r\n${head}\r\n\r\n${value}\r\n`).join('') + close;
  const methodPart = (boundary: string) =>
    parts(boundary, [['Content-Disposition: form-data; name="_method"', 'DELETE']]);

  it('(a) a Content-Type the gate would read but not forward (listed in Connection) is refused', async () => {
    // The origin would get no Content-Type, and Rack reads a POST without one as a form.
    await assertRefused([
      post('', { 'Content-Type': 'text/plain', Connection: 'content-type' }, '_method=DELETE'),
      post('', { 'Content-Type': 'text/plain', Connection: 'Content_Type' }, '%5Fmethod=DELETE'),
      post('', { 'Content-Type': FORM, Connection: 'content-length' }, 'a=1'),
      post('', { Connection: 'x-http-method-override', 'X-HTTP-Method-Override': 'DELETE' }),
    ]);
  });

  it('(b) a Content-Type naming more than one media type is refused', async () => {
    // Rack's media type ends at `,` as well as `;`: this is a form to it.
    await assertRefused([
      post('', { 'Content-Type': `${FORM}, x` }, '_method=DELETE'),
      post('', { 'Content-Type': `${FORM},text/plain` }, '%5Fmethod=DELETE'),
      post('', { 'Content-Type': 'text/plain, application/x-www-form-urlencoded' }, 'a=1'),
    ]);
  });

  it('(c) a multipart boundary an origin could read otherwise than the gate is refused', async () => {
    // Rack's and PHP's boundary ends at `,`: they find `--B` parts where the gate would look for `--B,x`.
    await assertRefused([
      post('', { 'Content-Type': 'multipart/form-data; boundary=B,x' }, methodPart('B')),
      post('', { 'Content-Type': 'multipart/form-data' }, '_method=DELETE'), // no boundary: Rack reads a form
      post('', { 'Content-Type': 'multipart/form-data; boundary =B' }, '_method=DELETE'),
      post('', { 'Content-Type': `multipart/form-data; boundary=${'b'.repeat(71)}` }, methodPart('b'.repeat(71))),
      post('', { 'Content-Type': 'multipart/form-data; boundary=A; x="boundary=B"' }, methodPart('B')),
      post('', { 'Content-Type': 'multipart/form-data; boundary=B x' }, methodPart('B')),
    ]);
  });

  it('(d) a `_method` part of any multipart type, however its name is written, is refused', async () => {
    const mixed = (body: string) => post('', { 'Content-Type': 'multipart/mixed; boundary=B' }, body);
    await assertRefused([
      mixed(methodPart('B')),
      post('', { 'Content-Type': 'multipart/related; boundary="B"' }, methodPart('B')),
      // Rack names a part by its Content-ID when it has no name.
      mixed(parts('B', [['Content-ID: _method', 'DELETE']])),
      // Rack reads the last ` name=` of the line.
      mixed(parts('B', [['Content-Disposition: form-data; name="a"; x=" name=_method"', 'DELETE']])),
      // A closing delimiter inside a value is not one (it does not start a line).
      mixed(
        parts('B', [
          ['Content-Disposition: form-data; name="a"', 'x--B--'],
          ['Content-Disposition: form-data; name="_method"', 'DELETE'],
        ]),
      ),
    ]);
  });

  it('(e) a JSON body is read as JSON whenever its type says json anywhere (Laravel)', async () => {
    await assertRefused(
      ['application/json-seq', 'text/plain;a=/json', 'application/json; charset=utf-8', 'TEXT/JSON5'].map((type) =>
        post('', { 'Content-Type': type }, '{"_method":"DELETE"}'),
      ),
    );
  });

  it('(f) a multipart part head an origin could split into other headers than the gate is refused', async () => {
    const form = (body: string) => post('', { 'Content-Type': 'multipart/form-data; boundary=B' }, body);
    const head = (lines: string) => form(parts('B', [[lines, 'DELETE']]));
    await assertRefused([
      // Rack 2.2/3.0 (Rails, Sinatra): `Content-Disposition:[^:]*;\s*name=` runs across a line without a colon.
      head('Content-Disposition: form-data\r\n; name="_method"'),
      // PHP (Laravel, Symfony) appends a line without a colon to the header before: name="_method".
      head('Content-Disposition: form-data; name="_me\r\nthod"'),
      head('Content-Disposition: form-data;\r\n name="_method"'),
      // PHP reads a name quoted by `'`, or unquoted up to white space.
      head("Content-Disposition: form-data; name='_method'"),
      head('Content-Disposition: form-data; name=_method x'),
      // Rack's Content-ID pattern is not anchored at a line start.
      head('X-Note: Content-ID: _method'),
      head('XContent-ID: _method'),
      // A part without a header line: Rack takes the part's first lines as its head.
      form('--B\r\n\r\nContent-Disposition: form-data; name="_method"\r\n\r\nDELETE\r\n--B--\r\n'),
    ]);
  });

  it('a POST body of any other type that could be read as a form naming `_method` is refused', async () => {
    await assertRefused([
      post('', { 'Content-Type': 'text/plain' }, '_method=DELETE'),
      post('', { 'Content-Type': 'application/octet-stream' }, 'a=1&%5Fmethod=DELETE'),
      post('', { 'Content-Type': 'text/plain' }, 'a=1&+_METHOD=PUT'),
      post('', { 'Content-Type': FORM }, '_method%00x=DELETE'), // PHP ends a name at NUL
    ]);
  });

  it('legitimate bodies pass: JSON, a form and a multipart upload without `_method`', async () => {
    const upload = parts('----WebKitFormBoundaryQ3x', [
      ['Content-Disposition: form-data; name="title"', 'method'],
      [
        'Content-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream',
        'x\u0001y',
      ],
    ]);
    const passing: Array<[string, string]> = [
      ['application/json', '{"title":"a","method":"DELETE"}'],
      [`${FORM}; charset=UTF-8`, 'title=a&method=DELETE'],
      ['multipart/form-data; boundary=----WebKitFormBoundaryQ3x', upload],
      ['text/plain', 'the _method field is documented'],
    ];
    // An upload as undici's FormData writes it (Node's fetch): quotes and line breaks escaped in the file name.
    const formData = new FormData();
    formData.append('title', 'a "quoted"\r\nvalue');
    formData.append('file', new Blob(['x\u0001y'], { type: 'application/octet-stream' }), 'na"me\r\n.bin');
    const request = new Request('http://127.0.0.1/', { method: 'POST', body: formData });
    passing.push([request.headers.get('content-type')!, Buffer.from(await request.arrayBuffer()).toString()]);
    for (const [type, body] of passing) {
      const res = await rawExchange(gate.url, post('', { 'Content-Type': type }, body));
      assert.equal(res.status, 200, `${type} ${body} → ${res.status} ${res.body}`);
      const seen = origin.requests.at(-1)!;
      assert.deepEqual([seen.method, seen.headers['content-type'], seen.body], ['POST', type, body]);
    }
  });
});
