/**
 * The gate's path rule as a pure function (src/gate/request-target.ts): targets an origin could resolve to
 * another path are refused with their reason — among them a `;` path parameter (servlet containers serve
 * `/items/premium;v=1` as `/items/premium`) and an escape of a Unicode compatibility character (`%EF%BD%90`, a
 * fullwidth `ｐ`, read as `p` by an origin that normalises); plain ones are accepted unchanged (only a bare `?` is
 * dropped), a `;` in the query included.
 */
import assert from 'node:assert/strict';
import { MAX_TARGET_LENGTH, readRequestTarget } from '../../../src/gate/request-target.js';

describe('gate request target: read once, refused or unchanged', () => {
  it('accepts plain targets unchanged', () => {
    for (const target of [
      '/',
      '/paid',
      '/paid/',
      '/a/b,c=d/%41%7e',
      '/files/report(1).txt',
      '/.well-known/thing',
      '/caf%C3%A9',
      '/q?a=1&b=..%2f&c=%5c?d',
      '/q?a=1;b=2&c=%3b',
    ])
      assert.deepEqual(readRequestTarget(target), {
        ok: true,
        path: target.split('?')[0],
        query: target.includes('?') ? target.slice(target.indexOf('?')) : '',
        url: target,
      });
    const bare = readRequestTarget('/paid?');
    assert.ok(bare.ok && bare.url === '/paid' && bare.query === '');
  });

  it('refuses what could resolve to another path, naming why', () => {
    const cases: Array<[string, string]> = [
      ['/public/..\\data', 'character'],
      ['/public/..%5Cdata', 'encoded_separator'],
      ['/public/%2e%2e/data', 'encoded_separator'],
      ['/public/%2E%2E%2Fdata', 'encoded_separator'],
      ['/public/%252e%252e/data', 'encoded_separator'],
      ['/public/../data', 'dot_segment'],
      ['/public/./data', 'dot_segment'],
      ['/public/..;x/data', 'dot_segment'],
      ['/public/..%3b/data', 'dot_segment'],
      ['/public/\uff0e\uff0e/data', 'character'],
      ['/public/%EF%BC%8E%EF%BC%8E/data', 'dot_segment'],
      ['/public/a%EF%BC%8Fb', 'encoded_separator'],
      ['/items/premium;v=1', 'path_parameter'],
      ['/premium;jsessionid=1', 'path_parameter'],
      ['/a;/b', 'path_parameter'],
      ['/items/premium%3bv=1', 'path_parameter'],
      ['/items/premium%3B', 'path_parameter'],
      ['/items/premium%EF%BC%9Bv=1', 'path_parameter'],
      ['/%EF%BD%90remium', 'not_canonical'],
      ['/items/%EF%AC%81le', 'not_canonical'],
      ['/caf%65%CC%81', 'not_canonical'],
      ['/%E2%84%AA', 'not_canonical'],
      ['/public//data', 'empty_segment'],
      ['//data', 'empty_segment'],
      ['/a%zz', 'escape'],
      ['/a%4', 'escape'],
      ['/a%00b', 'escape'],
      ['/a?b=%0a', 'escape'],
      ['/%c0%ae%c0%ae/data', 'not_utf8'],
      ['/a b', 'character'],
      ['/a#b', 'character'],
      ['/a\u0000', 'character'],
      ['http://evil.example/data', 'not_origin_form'],
      ['*', 'not_origin_form'],
      [`/${'a'.repeat(MAX_TARGET_LENGTH)}`, 'too_long'],
    ];
    for (const [target, problem] of cases)
      assert.deepEqual(readRequestTarget(target), { ok: false, problem }, JSON.stringify(target));
  });
});
