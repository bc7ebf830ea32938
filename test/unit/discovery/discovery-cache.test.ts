/**
 * The public catalogue's answer cache (src/api/discovery/discovery-cache.ts) and its pure neighbours: an answer
 * is reused for the same key within its lifetime only, a failed read is not kept, 0 turns it off, the oldest
 * entry goes first past the bound; search words become escaped ILIKE patterns; the revenue window is the last
 * 30 UTC days, today included.
 */
import assert from 'node:assert/strict';
import { DiscoveryCache } from '../../../src/api/discovery/discovery-cache.js';
import { escapeLikeTerm, searchPatterns } from '../../../src/api/discovery/discovery-search-terms.js';
import { revenueWindowStart } from '../../../src/api/discovery/discovery-service.js';

describe('public catalogue: cache, search words, revenue window', () => {
  it('reuses an answer within its lifetime, reads again after it, and never keeps a failure', async () => {
    let now = 0;
    let loads = 0;
    const cache = new DiscoveryCache<number>(1000, 2, () => now);
    const load = async () => ++loads;
    assert.equal(await cache.get('a', load), 1);
    now = 999;
    assert.equal(await cache.get('a', load), 1);
    now = 1000;
    assert.equal(await cache.get('a', load), 2);
    await assert.rejects(cache.get('b', () => Promise.reject(new Error('down'))));
    assert.equal(await cache.get('b', load), 3, 'the failure was not kept');
    await cache.get('c', load); // past the bound of 2: 'a' (the oldest) goes
    assert.equal(await cache.get('a', load), 5);
    const off = new DiscoveryCache<number>(0);
    assert.equal(await off.get('a', load), 6);
    assert.equal(await off.get('a', load), 7);
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
