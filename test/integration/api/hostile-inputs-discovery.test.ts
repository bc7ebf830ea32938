/**
 * The hostile-input table (test/vectors/hostile-inputs.json) thrown at every key of the public catalogue's
 * query strings (GET /discovery/resources, GET /discovery/search), over HTTP against real PostgreSQL: each value
 * is answered 200 (a value that is plain, valid text: it matches or filters nothing it should not) or 400 with
 * one of the catalogue's two stable codes — never another status or code, a request line over the server's
 * 16 KiB header bound aside (431 before the app reads it) — and nothing is written; a key named after a member
 * every object inherits (`__proto__`, `constructor`) is an unknown key like any other.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useTestTreasury } from '../../support/api-harness.js';
import { INHERITED_NAME_QUERIES } from '../../support/hostile-refusals.js';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;

/** The values thrown at each key, by what the key holds. */
const VALUES: Record<string, string[]> = {
  text: ['free_text', 'identifier'],
  payTo: ['evm_address'],
  network: ['caip2_network'],
  count: ['raw_token_amount', 'raw_amount_over_bigint', 'unix_seconds'],
};

/** A value as a query string gives it: arrays repeat the key, objects become bracketed keys. */
function queryOf(key: string, value: unknown): string {
  if (Array.isArray(value)) return value.map((v) => queryOf(key, v)).join('&') || `${key}=`;
  if (value !== null && typeof value === 'object')
    return (
      Object.entries(value)
        .map(([k, v]) => `${key}%5B${encodeURIComponent(k)}%5D=${encodeURIComponent(String(v))}`)
        .join('&') || `${key}=`
    );
  return `${key}=${encodeURIComponent(String(value).toWellFormed())}`;
}

const CODES = new Set(['discovery_query_invalid', 'discovery_page_out_of_range']);

describe('hostile inputs against the public catalogue (GET /discovery/*)', function () {
  this.timeout(300_000);
  const t = useTestTreasury();

  const counts = async () => {
    const out: Record<string, number> = {};
    for (const table of ['sellers', 'endpoints', 'ledger_entries', 'platform_collection_wallets', 'wallets'])
      out[table] = Number((await t.db.knex(table).count({ n: '*' }))[0]!.n);
    return out;
  };

  it('answers every value of the table with 200 or a stable 400, and writes nothing', async () => {
    const before = await counts();
    const keyValues: Array<[route: string, key: string, kind: string]> = [
      ['/discovery/resources', 'type', 'text'],
      ['/discovery/resources', 'scheme', 'text'],
      ['/discovery/resources', 'extensions', 'text'],
      ['/discovery/resources', 'network', 'network'],
      ['/discovery/resources', 'payTo', 'payTo'],
      ['/discovery/resources', 'limit', 'count'],
      ['/discovery/resources', 'offset', 'count'],
      ['/discovery/search?query=weather', 'cursor', 'count'],
      ['/discovery/search?query=weather', 'limit', 'count'],
      ['/discovery/search?type=http', 'query', 'text'],
    ];
    let refused = 0;
    for (const [route, key, kind] of keyValues) {
      const values = [...hostile.any!, ...VALUES[kind]!.flatMap((k) => hostile[k] ?? [])];
      for (const value of values) {
        const url = `${route}${route.includes('?') ? '&' : '?'}${queryOf(key, value)}`;
        const res = await t.request('GET', url);
        const what = `${url.slice(0, 120)} → ${res.status} ${String(JSON.stringify(res.body)).slice(0, 200)}`;
        if (res.status === 200) continue;
        // A request line past the server's 16 KiB header bound is refused before the app reads it.
        if (url.length > 16 * 1024 && res.status === 431) continue;
        assert.equal(res.status, 400, what);
        assert.ok(CODES.has(res.body.error_code), what);
        refused++;
      }
    }
    assert.ok(refused > 100, `most of the table is refused (${refused})`);
    assert.deepEqual(await counts(), before);
  });

  it('refuses a key named after an inherited member as unknown, on both routes', async () => {
    for (const route of ['/discovery/resources', '/discovery/search'])
      for (const q of INHERITED_NAME_QUERIES) {
        const res = await t.request('GET', `${route}?${q}`);
        const what = `${route}?${q} → ${res.status} ${String(JSON.stringify(res.body)).slice(0, 200)}`;
        assert.equal(res.status, 400, what);
        assert.equal(res.body.error_code, 'discovery_query_invalid', what);
      }
  });
});
