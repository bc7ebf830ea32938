/**
 * The compiled endpoint matcher (src/shared/endpoint-matcher.ts) answers what the ledger's route lookup answered
 * before it: the endpoint with that exact method and path, else the oldest endpoint of that method whose pattern
 * fits (matchPathPattern), else none. Checked on examples and, with fast-check, against that reference on
 * random endpoint sets and routes built from the same small alphabet (so that matches are frequent), including
 * patterns outside the grammar, which match nothing.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileEndpointMatcher, type MatchableEndpoint } from '../../../src/shared/endpoint-matcher.js';
import { matchPathPattern } from '../../../src/shared/path-pattern.js';

/** The lookup as the ledger did it before: exact path, else the first fitting pattern in age order. */
function reference(endpoints: readonly MatchableEndpoint[], method: string, route: string): string | null {
  const same = endpoints.filter((e) => e.method === method);
  const exact = same.find((e) => e.path === route);
  if (exact) return exact.id;
  return same.find((e) => e.path_pattern !== null && matchPathPattern(e.path_pattern, route))?.id ?? null;
}

const endpoint = (id: string, path: string, pattern: string | null = null, method = 'GET'): MatchableEndpoint => ({
  id,
  method,
  path,
  path_pattern: pattern,
});

describe('compiled endpoint matcher', () => {
  it('exact path first, then the oldest fitting pattern of the same method and shape', () => {
    const m = compileEndpointMatcher([
      endpoint('old', '/items', '/items/{id}'),
      endpoint('new', '/items/{sku}', '/items/{sku}'),
      endpoint('exact', '/items/7'),
      endpoint('file', '/files', '/files/{name}.json'),
      endpoint('post', '/items/x', '/items/{id}', 'POST'),
      endpoint('broken', '/b', '/b/{a}{b}'),
    ]);
    assert.equal(m.lookup('GET', '/items/7'), 'exact');
    assert.equal(m.lookup('GET', '/items/8'), 'old');
    assert.equal(m.lookup('POST', '/items/8'), 'post');
    assert.equal(m.lookup('GET', '/files/a.json'), 'file');
    assert.equal(m.lookup('GET', '/files/.json'), null);
    assert.equal(m.lookup('GET', '/items/8/more'), null);
    assert.equal(m.lookup('GET', '/b/xy'), null, 'a pattern outside the grammar matches nothing');
    assert.equal(m.lookup('GET', 'items/8'), null);
    assert.equal(m.size, 6);
  });

  it('answers as the reference lookup on random endpoints and routes', () => {
    const segment = fc.constantFrom('a', 'b', 'ab', 'x.json', '', '{id}', '{n}.json', 'v{v}', '{a}{b}', '{id');
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`);
    const routeSegment = fc.constantFrom('a', 'b', 'ab', 'x.json', 'q.json', 'v2', '', '{id}', 'zz');
    const route = fc.oneof(
      fc.array(routeSegment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`),
      fc.constantFrom('a', '', '//'),
    );
    const endpoints = fc
      .array(
        fc.record({
          path,
          pattern: fc.option(path, { nil: null }),
          method: fc.constantFrom('GET', 'POST'),
        }),
        { maxLength: 12 },
      )
      .map((list) => list.map((e, i) => endpoint(`ep${i}`, e.path, e.pattern, e.method)));
    fc.assert(
      fc.property(
        endpoints,
        fc.array(route, { minLength: 1, maxLength: 8 }),
        fc.constantFrom('GET', 'POST'),
        (es, routes, method) => {
          const m = compileEndpointMatcher(es);
          for (const r of routes) assert.equal(m.lookup(method, r), reference(es, method, r), `${method} ${r}`);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
