/**
 * The public catalogue's answer cache (src/api/discovery/discovery-cache.ts) and its neighbours: an answer
 * is reused for the same key within its lifetime only, a failed read is not kept, 0 turns it off, the oldest
 * entry goes first past the bound; what the kept answers weigh stays under the byte bound, an answer over the
 * entry bound is not kept, an expired answer goes unread; the service's read slots
 * (src/api/discovery/discovery-read-slots.ts) refuse a read past them with 503 and give slots back; search words become escaped ILIKE patterns; the revenue window is the last
 * 30 UTC days, today included.
 */
import assert from 'node:assert/strict';
import {
  DISCOVERY_CACHE_MAX_BYTES,
  DISCOVERY_CACHE_MAX_ENTRY_BYTES,
  DiscoveryCache,
} from '../../../src/api/discovery/discovery-cache.js';
import { DISCOVERY_READ_SLOTS } from '../../../src/api/discovery/discovery-read-slots.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import type { ChainInfo } from '../../../src/shared/chain-registry.js';
import { escapeLikeTerm, searchPatterns } from '../../../src/api/discovery/discovery-search-terms.js';
import { DiscoveryService, revenueWindowStart } from '../../../src/api/discovery/discovery-service.js';

describe('public catalogue: cache, search words, revenue window', () => {
  it('reuses an answer within its lifetime, reads again after it, and never keeps a failure', async () => {
    let now = 1000; // lru-cache reads a start of 0 as "no lifetime": the clock starts later
    let loads = 0;
    const cache = new DiscoveryCache<number>(1000, { maxEntries: 2, now: () => now });
    const load = async () => ++loads;
    assert.equal(await cache.get('a', load), 1);
    now = 2000;
    assert.equal(await cache.get('a', load), 1);
    now = 2001;
    assert.equal(await cache.get('a', load), 2);
    await assert.rejects(cache.get('b', () => Promise.reject(new Error('down'))));
    assert.equal(await cache.get('b', load), 3, 'the failure was not kept');
    await cache.get('c', load); // past the bound of 2: 'a' (the oldest) goes
    assert.equal(await cache.get('a', load), 5);
    const off = new DiscoveryCache<number>(0);
    assert.equal(await off.get('a', load), 6);
    assert.equal(await off.get('a', load), 7);
  });

  it('shares one read between the same query asked while it is under way', async () => {
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const cache = new DiscoveryCache<number>(60_000);
    const load = async () => {
      loads++;
      await gate;
      return 7;
    };
    const both = Promise.all([cache.get('a', load), cache.get('a', load)]);
    release();
    assert.deepEqual(await both, [7, 7]);
    assert.equal(loads, 1);
  });

  it('keeps what its answers weigh under its byte bound, and does not keep one heavier than an entry may be', async () => {
    // Pages of rows each carrying ~33 KB of declared schemas, as the store reads them (distinct queries).
    const row = (i: number) => ({ id: i, discovery: { input: 'x'.repeat(33_000) } });
    const page = (rows: number) => ({ rows: Array.from({ length: rows }, (_, i) => row(i)) });
    const cache = new DiscoveryCache<{ rows: unknown[] }>(60_000, {
      maxBytes: 1_000_000,
      maxEntryBytes: 400_000,
    });
    for (let q = 0; q < 100; q++) {
      await cache.get(`q${q}`, async () => page(10)); // ~330 KB each: 33 MB asked in all
      assert.ok(cache.usage.bytes <= 1_000_000, `after ${q + 1} pages: ${cache.usage.bytes}`);
    }
    assert.equal(cache.usage.entries, 3, 'three pages of ~330 KB fit in 1 MB');
    let loads = 0;
    const heavy = async () => (loads++, page(20)); // ~660 KB: over the entry bound
    await cache.get('heavy', heavy);
    await cache.get('heavy', heavy);
    assert.equal(loads, 2, 'an answer over the entry bound is served, not kept');
    assert.equal(cache.usage.entries, 3);
    // The defaults: 32 MiB in all, 4 MiB an answer.
    assert.deepEqual([DISCOVERY_CACHE_MAX_BYTES, DISCOVERY_CACHE_MAX_ENTRY_BYTES], [32 * 1024 * 1024, 4 * 1024 * 1024]);
  });

  it('drops an answer once its lifetime is over, read again or not', async () => {
    const cache = new DiscoveryCache<string>(20);
    for (let q = 0; q < 5; q++) await cache.get(`q${q}`, async () => 'x'.repeat(10_000));
    assert.equal(cache.usage.entries, 5);
    // No read after this: the answers go on their own (lru-cache's ttlAutopurge). Polled, not timed.
    for (let i = 0; i < 500 && cache.usage.entries > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(cache.usage, { bytes: 0, entries: 0 });
  });

  it('runs at most its slots of catalogue reads at once and refuses the next with 503 database_busy', async () => {
    const gates: Array<() => void> = [];
    let reads = 0;
    const store = {
      page: async () => {
        reads++;
        await new Promise<void>((r) => gates.push(r));
        return { rows: [], total: 0 };
      },
    };
    const service = new DiscoveryService({
      store,
      chain: { network: 'eip155:84532' } as unknown as ChainInfo,
      clock: () => new Date('2026-12-01T00:00:00Z'),
      cacheMs: 60_000,
    });
    const search = (query: string) => service.matching({ query, limit: 10, cursor: 0 });
    const running = Array.from({ length: DISCOVERY_READ_SLOTS }, (_, i) => search(`term${i}`));
    await assert.rejects(search('one-more'), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'database_busy');
      assert.equal(err.status, 503);
      assert.deepEqual(err.headers, { 'Retry-After': '1' });
      return true;
    });
    const joined = search('term0'); // the same query as one under way waits for it: no slot taken
    assert.equal(reads, DISCOVERY_READ_SLOTS);
    for (const open of gates) open();
    await Promise.all([...running, joined]);
    const after = search('one-more'); // the slots were given back
    gates.at(-1)!();
    await after;
    assert.equal(reads, DISCOVERY_READ_SLOTS + 1);
  });

  it('turns search text into at most eight escaped %term% patterns', () => {
    assert.equal(escapeLikeTerm('a%b_c\\d'), 'a\\%b\\_c\\\\d');
    assert.deepEqual(searchPatterns('  Weather  weather CITY '), ['%weather%', '%city%']);
    assert.deepEqual(searchPatterns('100% _x \\'), ['%100\\%%', '%\\_x%', '%\\\\%']);
    assert.equal(searchPatterns('a b c d e f g h i j').length, 8);
  });

  it('counts revenue from the 30th UTC day back, today included', () => {
    assert.equal(revenueWindowStart(new Date('2026-11-29T23:59:59Z')), '2026-10-31');
    assert.equal(revenueWindowStart(new Date('2026-03-01T00:00:00Z')), '2026-01-31');
  });
});
