/**
 * The method-override rule as a pure function (src/gate/method-override.ts), on the edges the integration suite
 * (test/integration/gate/gate-method-override.test.ts) does not walk: it decides on the headers that cross
 * (proxy-headers.ts), a plain multipart boundary passes whatever it spells, one an origin could read otherwise is
 * refused on a POST, and methods other than POST keep their readers without the POST-only fail-closed rules.
 */
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { asksMethodOverride } from '../../../src/gate/method-override.js';

const FORM = 'application/x-www-form-urlencoded';

/** Does `method` with `headers` and `body` (no query) ask for an override? */
const asks = (method: string, headers: IncomingHttpHeaders, body?: string) =>
  asksMethodOverride(method, headers, '', body === undefined ? undefined : Buffer.from(body, 'latin1'));

/** A one-part multipart body under `boundary`, the part named `name`. */
const onePart = (boundary: string, name: string) =>
  `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\nDELETE\r\n--${boundary}--\r\n`;

describe('gate method override: the rule on the forwarded headers and the body', () => {
  it('plain multipart boundaries are read: the part named `_method` is refused, any other passes', () => {
    for (const [param, boundary] of [
      ['boundary=----WebKitFormBoundaryQ3xBoundary', '----WebKitFormBoundaryQ3xBoundary'],
      ['boundary="a b:c=d?"', 'a b:c=d?'],
      [`boundary=${'x'.repeat(70)}`, 'x'.repeat(70)],
      ['charset=utf-8; boundary=B', 'B'],
    ] as const) {
      const headers = { 'content-type': `multipart/form-data; ${param}` };
      assert.equal(asks('POST', headers, onePart(boundary, '_method')), true, param);
      assert.equal(asks('POST', headers, onePart(boundary, 'title')), false, param);
    }
  });

  it('on a POST with a body, a boundary an origin could read otherwise is refused', () => {
    for (const type of [
      'multipart/form-data',
      'multipart/form-data; boundary=',
      'multipart/form-data; Boundary=B',
      'multipart/form-data; boundary=B; x=boundary',
      'multipart/form-data; boundary="B boundary=C"',
      `multipart/form-data; boundary=${'x'.repeat(71)}`,
      'multipart/form-data; boundary="B "',
      'multipart/form-data; boundary=B\\',
    ])
      assert.equal(asks('POST', { 'content-type': type }, onePart('B', 'title')), true, type);
    // Without a body there is nothing to read.
    assert.equal(asks('POST', { 'content-type': 'multipart/form-data' }), false);
  });

  it('a Connection header hiding a header the rule reads is refused on any method', () => {
    for (const listed of ['content-type', 'Content-Length', 'x_http_method_override', 'keep-alive, X-Method-Override'])
      assert.equal(asks('GET', { connection: listed }), true, listed);
    assert.equal(asks('GET', { connection: 'keep-alive, x-hop' }), false);
  });

  it('what does not cross is not read: a Content-Type spelt Content_Type', () => {
    assert.equal(asks('PUT', { 'content-type': 'text/plain', content_type: FORM }, '_method=DELETE'), false);
    assert.equal(asks('POST', { 'content-type': FORM, content_type: 'text/plain' }, '_method=DELETE'), true);
  });

  it('other methods keep their readers, without the POST-only rules', () => {
    assert.equal(asks('PUT', { 'content-type': 'text/plain' }, '_method=DELETE'), false);
    assert.equal(asks('PUT', { 'content-type': `${FORM}, x` }, 'a=1'), false);
    assert.equal(asks('PUT', { 'content-type': 'multipart/form-data' }, '_method=DELETE'), false);
    assert.equal(asks('PUT', { 'content-type': `${FORM}, x` }, '_method=DELETE'), true);
    assert.equal(asks('PATCH', { 'content-type': 'application/json-patch+json' }, '{"_method":"GET"}'), true);
    assert.equal(asks('DELETE', {}, 'a=1&_method=POST'), true);
  });

  it('a JSON type reads the body as JSON only; any other POST body is read as a form', () => {
    assert.equal(asks('POST', { 'content-type': 'application/json' }, 'a=1&_method=DELETE'), false);
    assert.equal(asks('POST', { 'content-type': 'application/json' }, '{"note":"_method=DELETE"}'), false);
    assert.equal(asks('POST', { 'content-type': 'application/octet-stream' }, 'x&_METHOD%5B%5D=PUT'), true);
    assert.equal(asks('POST', { 'content-type': 'text/csv' }, 'name,_method\nA,DELETE'), false);
  });
});
