/** The path-pattern grammar and matcher (src/shared/path-pattern.ts), and OpenAPI ingest's use of it. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { matchPathPattern, parsePathPattern, PATH_PATTERN_MAX_LENGTH } from '../../../src/shared/path-pattern.js';
import { parseOpenApi } from '../../../src/api/sellers/origin/openapi-ingest.js';

describe('path patterns', () => {
  it('accepts one parameter per segment, with literal text around it', () => {
    const patterns = ['/', '/search', '/items/{id}', '/files/{name}.json', '/v{major}/reports/{report_id}/pages'];
    for (const ok of [...patterns, '/a/{b}/c/{d}', '/x/{snake_case.name-1~}']) {
      assert.equal(parsePathPattern(ok).ok, true, ok);
    }
  });

  it('refuses several parameters in a segment, bad braces, duplicate names and oversize patterns, saying why', () => {
    const cases: Array<[string, RegExp]> = [
      ['/{a}{b}', /one parameter per segment/],
      ['/x/{a}-{b}', /one parameter per segment/],
      ['/x/{a', /without its "}"/],
      ['/x/a}', /without its "{"/],
      ['/x/}{a}', /without its "{"/],
      ['/x/{}', /parameter names/],
      ['/x/{a b}', /parameter names/],
      ['/x/{a}/{a}', /appears twice/],
      ['items/{id}', /absolute path/],
      ['/' + 'a/'.repeat(40), /segments/],
      ['/' + Array.from({ length: 17 }, (_, i) => `{p${i}}`).join('/'), /parameters/],
      ['/' + 'a'.repeat(PATH_PATTERN_MAX_LENGTH), /characters/],
    ];
    for (const [pattern, why] of cases) {
      const parsed = parsePathPattern(pattern);
      assert.equal(parsed.ok, false, pattern);
      assert.match((parsed as { problem: string }).problem, why, pattern);
    }
  });

  it('matches segment by segment: literals exactly, a parameter one or more characters of one segment', () => {
    const table: Array<[string, string, boolean]> = [
      ['/items/{id}', '/items/42', true],
      ['/items/{id}', '/items/', false],
      ['/items/{id}', '/items/42/x', false],
      ['/items/{id}', '/Items/42', false],
      ['/files/{name}.json', '/files/a.json', true],
      ['/files/{name}.json', '/files/.json', false],
      ['/files/{name}.json', '/files/a.json.bak', false],
      ['/v{major}/x', '/v1/x', true],
      ['/v{major}/x', '/v/x', false],
      ['/ab{p}ba', '/aba', false],
      ['/ab{p}ba', '/abxba', true],
      ['/search', '/search', true],
      ['/search', 'search', false],
      ['/{a}{b}', '/ab', false],
    ];
    for (const [pattern, route, expected] of table)
      assert.equal(matchPathPattern(pattern, route), expected, `${pattern} ~ ${route}`);
  });

  it('stays linear on the patterns and routes that froze a backtracking regex', () => {
    const hostile = '/' + Array.from({ length: 24 }, (_, i) => `{${String.fromCharCode(97 + i)}}`).join('');
    const started = process.hrtime.bigint();
    for (let i = 0; i < 1_000; i++) {
      matchPathPattern(hostile, '/' + 'a'.repeat(58) + '/');
      matchPathPattern(
        '/' + Array.from({ length: 16 }, (_, j) => `x{p${j}}y`).join('/'),
        '/' + 'xay/'.repeat(16) + 'z'.repeat(400),
      );
    }
    assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 1_000, 'two thousand matches in under a second');
  });

  it('every hostile route pattern of the shared table is refused, or is literal text that matches only itself', () => {
    const hostile = JSON.parse(
      fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
    ) as { route_pattern: string[] };
    assert.ok(hostile.route_pattern.length >= 8, 'the table was read');
    for (const pattern of hostile.route_pattern) {
      const parsed = parsePathPattern(pattern);
      if (!parsed.ok) {
        assert.equal(matchPathPattern(pattern, pattern), false, `a refused pattern matches nothing: ${pattern}`);
        continue;
      }
      assert.ok(
        parsed.segments.every((s) => s.kind === 'literal'),
        `only literal text is taken: ${pattern}`,
      );
      assert.equal(matchPathPattern(pattern, pattern), true, pattern);
      for (const route of ['/a', '/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!', '/(a)', '/(a+)+', '/(a+)+$/'])
        assert.equal(matchPathPattern(pattern, route), false, `${pattern} ~ ${route}`);
    }
  });

  it('OpenAPI ingest keeps valid patterned paths and skips those outside the grammar', () => {
    const doc = {
      openapi: '3.1.0',
      paths: {
        '/items/{id}': { get: { operationId: 'getItem' } },
        '/files/{name}.json': { get: { operationId: 'getFile' } },
        '/{a}{b}{c}{d}': { get: { operationId: 'hostile' } },
        '/x/{a}-{b}': { get: { operationId: 'twoInOne' } },
        '/plain': { get: { operationId: 'plain' } },
      },
    };
    const got = parseOpenApi(JSON.stringify(doc)).map((e) => [e.slug, e.path_pattern]);
    assert.deepEqual(got, [
      ['getitem', '/items/{id}'],
      ['getfile', '/files/{name}.json'],
      ['plain', null],
    ]);
  });
});
