/**
 * The method-override rule as a pure function (src/gate/method-override.ts), on the edges the integration suite
 * (test/integration/gate/gate-method-override.test.ts) does not walk: it decides on the headers that cross
 * (proxy-headers.ts), a plain multipart boundary passes whatever it spells, one an origin could read otherwise is
 * refused on a POST, and methods other than POST keep their readers without the POST-only fail-closed rules; a
 * multipart part head an origin could split into other headers than the gate is refused on a POST, while the
 * heads real clients write (undici's FormData, curl, browsers, OkHttp, multipart/related) pass.
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

/** A multipart/form-data POST under boundary B of one part with `head` (its header lines, as sent). */
const partWithHead = (head: string) =>
  asks('POST', { 'content-type': 'multipart/form-data; boundary=B' }, `--B\r\n${head}\r\n\r\nDELETE\r\n--B--\r\n`);

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

  it('on a POST, a multipart part head an origin could split into other headers is refused', () => {
    for (const head of [
      // Rack 2.2/3.0: `Content-Disposition:[^:]*;\s*name=` runs across a line without a colon.
      'Content-Disposition: form-data\r\n; name="_method"',
      'Content-Disposition: form-data; name="x"\r\n; name=_method',
      // PHP and commons-fileupload append a line without a colon, or starting with white space, to the one before.
      'Content-Disposition: form-data; name="_me\r\nthod"',
      'Content-Disposition: form-data; na\r\nme="_method"',
      'Content-Disposition: form-data; name="_me\nthod"',
      'Content-Disposition: form-data;\r\n name="_method"',
      'Content-Disposition: form-data;\r\n\tname="_method"',
      // Rack's Content-ID and Content-Disposition patterns are not anchored at a line start.
      'X-Note: Content-ID: _method',
      'XContent-ID: _method',
      'Content-Type: text/plain; x=content-disposition:',
      // Rack's `Content-ID:\s*` runs on past a blank value.
      'Content-ID:\r\n_method[: x',
      'Content-ID: \t',
      // PHP reads a `name` quoted by `'`, an unquoted one up to white space, past repeated `=` (php-part-name.ts).
      "Content-Disposition: form-data; name='_method'",
      'Content-Disposition: form-data; name=_method x',
      'Content-Disposition: form-data; name==_method',
      "Content-Disposition: form-data; x='a;b'; NAME='_method'",
      // A header name that is not a token, a control character in a value.
      'Content-Disposition : form-data; name="a"',
      'Content-Disposition: form-data; name="a"\rx',
      'Content-Disposition: form-data; name="a\u0000"',
    ])
      assert.equal(partWithHead(head), true, JSON.stringify(head));
    const type = { 'content-type': 'multipart/mixed; boundary=B' };
    // No header line: Rack reads the part's first lines as its head.
    assert.equal(asks('POST', type, '--B\r\n\r\nContent-ID: _method\r\n\r\nDELETE\r\n--B--'), true);
    // Padding after a delimiter; a part after a closing delimiter inside a value (the scan would take it as one).
    assert.equal(asks('POST', type, '--B \r\nContent-ID: a\r\n\r\nx\r\n--B--'), true);
    const hidden = 'x--B--\r\n--B\r\nContent-Disposition: form-data\r\n; name="_method"\r\n\r\nDELETE\r\n--B--';
    assert.equal(asks('POST', type, `--B\r\nContent-ID: a\r\n\r\n${hidden}`), true);
    // Methods other than POST are not overridden by a body: only a part named `_method` is refused there.
    assert.equal(asks('PUT', type, '--B\r\nContent-ID: a\r\n; b\r\n\r\nx\r\n--B--'), false);
    assert.equal(asks('PUT', type, "--B\r\nContent-Disposition: form-data; name='_method'\r\n\r\nx\r\n--B--"), true);
  });

  it('on a POST, the multipart heads real clients write pass', async () => {
    const form = new FormData();
    form.append('title', 'a "quoted"\r\nvalue naming _method');
    form.append('file', new Blob(['x\u0001y'], { type: 'application/octet-stream' }), 'na"me\r\n\u00e4.bin');
    form.append('blob', new Blob(['z']));
    const request = new Request('http://127.0.0.1/', { method: 'POST', body: form });
    const undiciBody = Buffer.from(await request.arrayBuffer());
    const undiciType = request.headers.get('content-type')!;
    assert.equal(asksMethodOverride('POST', { 'content-type': undiciType }, '', undiciBody), false, undiciType);

    const curl = '------------------------d74496d66958873e';
    const browser = '----WebKitFormBoundary7MA4YWxkTrZu0gW';
    for (const [type, body] of [
      [
        `multipart/form-data; boundary=${curl}`,
        `--${curl}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhi\r\n` +
          `--${curl}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n` +
          `Content-Type: text/plain\r\n\r\nbody\r\n--${curl}--\r\n`,
      ],
      [
        `multipart/form-data; boundary=${browser}`,
        `--${browser}\r\nContent-Disposition: form-data; name="f"; filename="\u00c3\u00a4 %22.png"\r\n` +
          `Content-Type: image/png\r\n\r\n\u0089PNG\r\n--${browser}--`,
      ],
      [
        'multipart/form-data; boundary=ok',
        '--ok\r\nContent-Disposition: form-data; name="f"; filename="b"\r\nContent-Type: text/plain\r\n' +
          'Content-Length: 1\r\nContent-Transfer-Encoding: binary\r\n\r\nb\r\n--ok--\r\n',
      ],
      [
        'multipart/related; boundary=rel; type="application/json"',
        '--rel\r\nContent-Type: application/json; charset=UTF-8\r\nContent-ID: <root>\r\n\r\n{}\r\n' +
          '--rel\r\nContent-Type: image/png\r\nContent-ID: <img1>\r\n\r\nx\r\n--rel--\r\n\r\nepilogue',
      ],
    ])
      assert.equal(asks('POST', { 'content-type': type }, body), false, type);
  });
});
