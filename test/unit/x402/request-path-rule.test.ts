/**
 * The path rule as the Koa middleware applies it (src/x402/seller/request-path-rule.ts `requestPathProblem`, on
 * `ctx.path`; src/x402/seller/refused-path.ts): the same reasons as the gate's reading of a whole target
 * (`readRequestTarget`, test/unit/gate/request-target.test.ts) for every path, whatever its query — one rule, two
 * callers — and the 400 `x402_path_refused` answer naming the reason.
 */
import assert from 'node:assert/strict';
import { ERROR_CODES } from '../../../src/shared/error-codes.js';
import { refusedPathAnswer } from '../../../src/x402/seller/refused-path.js';
import {
  MAX_TARGET_LENGTH,
  readRequestTarget,
  requestPathProblem,
} from '../../../src/x402/seller/request-path-rule.js';
import * as gateTarget from '../../../src/gate/request-target.js';

const PLAIN = ['/', '/paid', '/paid/', '/a/b,c=d/%41%7e', '/files/report(1).txt', '/.well-known/thing', '/caf%C3%A9'];

/** Paths the rule refuses, with the reason; the ones a static file server resolves to `/data/premium.csv` first. */
const REFUSED: ReadonlyArray<[string, string]> = [
  ['/data/./premium.csv', 'dot_segment'],
  ['/x/../data/premium.csv', 'dot_segment'],
  ['/x/%2e%2e/data/premium.csv', 'encoded_separator'],
  ['/data%2fpremium.csv', 'encoded_separator'],
  ['/data/premium.csv/%2E', 'encoded_separator'],
  ['/data//premium.csv', 'empty_segment'],
  ['/public/..\\data', 'character'],
  ['/public/..%5Cdata', 'encoded_separator'],
  ['/public/%252e%252e/data', 'encoded_separator'],
  ['/public/..;x/data', 'dot_segment'],
  ['/public/%EF%BC%8E%EF%BC%8E/data', 'dot_segment'],
  ['/public/a%EF%BC%8Fb', 'encoded_separator'],
  ['/items/premium;v=1', 'path_parameter'],
  ['/items/premium%3bv=1', 'path_parameter'],
  ['/%EF%BD%90remium', 'not_canonical'],
  ['/a%zz', 'escape'],
  ['/a%00b', 'escape'],
  ['/%c0%ae%c0%ae/data', 'not_utf8'],
  ['/a b', 'character'],
  ['/a?b', 'character'],
  ['*', 'not_origin_form'],
  ['http://evil.example/data', 'not_origin_form'],
  [`/${'a'.repeat(MAX_TARGET_LENGTH)}`, 'too_long'],
];

describe('x402 seller: the path rule on a request path', () => {
  it('accepts plain paths and refuses the rest, naming why', () => {
    for (const path of PLAIN) assert.equal(requestPathProblem(path), undefined, path);
    for (const [path, problem] of REFUSED) assert.equal(requestPathProblem(path), problem, JSON.stringify(path));
  });

  it('gives the gate’s reading of the same path, with or without a plain query (one rule)', () => {
    assert.equal(gateTarget.readRequestTarget, readRequestTarget, 'the gate reads targets with the shared rule');
    for (const path of [...PLAIN, ...REFUSED.map(([p]) => p)].filter((p) => !p.includes('?') && p.length < 1000))
      for (const query of ['', '?a=1;b=..%2f']) {
        const read = readRequestTarget(path + query);
        assert.equal(read.ok ? undefined : read.problem, requestPathProblem(path), JSON.stringify(path + query));
      }
  });

  it('answers a refused path 400 x402_path_refused with the reason; a plain path gets no answer', () => {
    for (const path of PLAIN) assert.equal(refusedPathAnswer(path), undefined, path);
    assert.deepEqual(refusedPathAnswer('/x/%2e%2e/data/premium.csv'), {
      status: 400,
      headers: { 'Cache-Control': 'no-store', Connection: 'close' },
      body: {
        error_code: 'x402_path_refused',
        user_message: ERROR_CODES.x402_path_refused.message,
        problem: 'encoded_separator',
      },
    });
  });
});
