/**
 * A request's query as the routes read it (src/api/http/request-query.ts), over Koa's own request objects: an
 * ordinary query string reads exactly as Koa's `ctx.query` reads it (repeated keys an array in order, `+` and
 * percent escapes decoded, a byte that is no UTF-8 as U+FFFD), so no query a route took before is read
 * differently; a key named after a member every object inherits is an own key like any other (Koa 3.2's
 * `ctx.query` swallows `__proto__` and answers a whole query string `constructor` with a function).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { queryOf } from '../../../src/api/http/request-query.js';

/** Each query string's two readings, Koa's and ours, from one real request each. */
async function readings(querystrings: string[]): Promise<Array<{ koa: unknown; ours: unknown; ownKeys: string[] }>> {
  const app = new Koa();
  app.use((ctx) => {
    const ours = queryOf(ctx);
    const koa = ctx.query as unknown;
    ctx.body = {
      koa: typeof koa === 'object' && koa !== null ? { ...koa } : typeof koa,
      ours: { ...ours },
      ownKeys: Object.keys(ours),
      noPrototype: Object.getPrototypeOf(ours) === null,
    };
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const out = [];
    for (const q of querystrings) {
      const body = (await (await fetch(`http://127.0.0.1:${port}/x?${q}`)).json()) as {
        koa: unknown;
        ours: unknown;
        ownKeys: string[];
        noPrototype: boolean;
      };
      assert.equal(body.noPrototype, true, q);
      out.push(body);
    }
    return out;
  } finally {
    server.close();
  }
}

describe('a request query', () => {
  it('reads an ordinary query string exactly as Koa does', async () => {
    const ordinary = [
      '',
      'limit=5',
      'limit=5&cursor=abc',
      'status=active&status=revoked&status=',
      'a+b=c+d&e=%20f%2Bg',
      'k=%FF&l=%00&m=%ED%A0%80',
      'k',
      'k=&k',
      '=v&=w',
      'a[x]=1&a[y]=2',
      'x=1;y=2',
      '%61=%62',
    ];
    for (const [i, r] of (await readings(ordinary)).entries()) assert.deepEqual(r.ours, r.koa, ordinary[i]);
  });

  it('reads a key named after an inherited member as an own key', async () => {
    const cases: Array<[query: string, ours: Record<string, unknown>]> = [
      ['__proto__=1', { ['__proto__']: '1' }],
      ['__proto__', { ['__proto__']: '' }],
      ['__proto__=a&__proto__=b', { ['__proto__']: ['a', 'b'] }],
      ['constructor', { constructor: '' }],
      ['toString', { toString: '' }],
      ['hasOwnProperty=1&limit=2', { hasOwnProperty: '1', limit: '2' }],
    ];
    const read = await readings(cases.map(([q]) => q));
    for (const [i, [q, expected]] of cases.entries()) {
      assert.deepEqual(read[i]!.ownKeys, Object.keys(expected), q);
      assert.equal(JSON.stringify(read[i]!.ours), JSON.stringify(expected), q);
    }
  });
});
