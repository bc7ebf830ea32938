/**
 * When a remembered spend state may be decided on (signer/owner-policy/spend-state-cache.ts): only under the policy
 * version it was read with, only while the calendar windows start where its own did and the sliding ones no
 * earlier, and not for a while after a commit on it failed; its velocity count aged by the spends known to have
 * left the window, never by others.
 */
import assert from 'node:assert/strict';
import { SpendStateCache } from '../../../signer/owner-policy/spend-state-cache.js';
import type { StateQuery } from '../../../signer/owner-policy/spend-statements.js';

const at = (iso: string) => new Date(iso);
const query = (overrides: Partial<StateQuery> = {}): StateQuery => ({
  address: '0xabc',
  dayStart: at('2026-11-29T00:00:00Z'),
  weekStart: at('2026-11-23T00:00:00Z'),
  monthStart: at('2026-11-01T00:00:00Z'),
  velocityStart: at('2026-11-29T10:00:00Z'),
  since: at('2026-10-29T10:00:00Z'),
  ...overrides,
});
const state = { dailySpentMicro: 5n, weeklySpentMicro: 5n, monthlySpentMicro: 5n, recentCount: 1, lastPaymentAt: null };
const mark = { address: '0xabc', version: 3, seq: '7' };
/** The one spend `state` counts in its velocity window, at 10:00:30. */
const window = { count: 1, oldest_us: [Date.parse('2026-11-29T10:00:30Z') * 1000] };

describe('the remembered spend state of a signed wallet', () => {
  it('is given back under the same version and windows, and for later sliding windows', () => {
    const cache = new SpendStateCache();
    cache.set(query(), state, mark, window);
    assert.deepEqual(cache.get(query(), 3), { state, mark, window });
    const later = query({ velocityStart: at('2026-11-29T10:00:05Z'), since: at('2026-10-29T10:00:05Z') });
    assert.deepEqual(cache.get(later, 3), { state, mark, window });
  });

  it('ages its velocity count as the window slides: a known spend that left is taken off, an unknown one never', () => {
    const cache = new SpendStateCache();
    const [first, second] = [Date.parse('2026-11-29T10:00:02Z') * 1000, Date.parse('2026-11-29T10:00:03Z') * 1000];
    // Three spends in the window: two known (10:00:02 and 10:00:03), one newer than both unknown.
    const three = { count: 3, oldest_us: [first, second] };
    cache.set(query(), { ...state, recentCount: 3 }, mark, three);
    const slid = (iso: string) => query({ velocityStart: at(iso), since: at('2026-10-29T10:00:05Z') });
    assert.equal(cache.get(slid('2026-11-29T10:00:01.999Z'), 3)!.state.recentCount, 3);
    // The window excludes its start: a spend at 10:00:02 leaves once the window starts there.
    assert.deepEqual(cache.get(slid('2026-11-29T10:00:02Z'), 3)!.window, { count: 2, oldest_us: [second] });
    assert.equal(cache.get(slid('2026-11-29T10:00:02Z'), 3)!.state.recentCount, 2);
    // Both known ones left: the unknown one may have too, and is still counted (the store decides a refusal again).
    assert.equal(cache.get(slid('2026-11-29T10:10:00Z'), 3)!.state.recentCount, 1);
    assert.equal(cache.get(query(), 3)!.state.recentCount, 3, 'the remembered window itself is unchanged');
  });

  it('names where to read its window on once every spend time it knew has left, and only then', () => {
    const cache = new SpendStateCache();
    const [first, second] = [Date.parse('2026-11-29T10:00:02Z') * 1000, Date.parse('2026-11-29T10:00:03Z') * 1000];
    cache.set(query(), { ...state, recentCount: 3 }, mark, { count: 3, oldest_us: [first, second] });
    const slid = (iso: string) => query({ velocityStart: at(iso), since: at('2026-10-29T10:00:05Z') });
    assert.equal(cache.get(slid('2026-11-29T10:00:02Z'), 3)!.readOn, undefined, 'one known spend still inside');
    assert.deepEqual(cache.get(slid('2026-11-29T10:00:03Z'), 3)!.readOn, {
      lastKnownUs: second,
      knownAtLast: 1,
      count: 1,
    });
    cache.set(query(), state, mark, window);
    assert.equal(cache.get(slid('2026-11-29T10:05:00Z'), 3)!.readOn, undefined, 'every spend known: nothing to read');
  });

  it('is not given back under another policy version, another calendar window or an earlier sliding one', () => {
    const cache = new SpendStateCache();
    cache.set(query(), state, mark, window);
    assert.equal(cache.get(query(), 4), undefined, 'another version');
    assert.equal(cache.get(query({ dayStart: at('2026-11-30T00:00:00Z') }), 3), undefined, 'a new day');
    assert.equal(cache.get(query({ weekStart: at('2026-11-30T00:00:00Z') }), 3), undefined, 'a new week');
    assert.equal(cache.get(query({ monthStart: at('2026-12-01T00:00:00Z') }), 3), undefined, 'a new month');
    assert.equal(cache.get(query({ velocityStart: at('2026-11-29T09:59:59Z') }), 3), undefined, 'velocity earlier');
    assert.equal(cache.get(query({ velocityStart: null }), 3), undefined, 'no velocity window now');
    assert.equal(cache.get(query({ since: at('2026-10-29T09:00:00Z') }), 3), undefined, 'look-back earlier');
    assert.equal(cache.get(query({ address: '0xdef' }), 3), undefined, 'another wallet');
  });

  it('after a failed commit, is not used for a second, then is remembered again', () => {
    let now = 0;
    const cache = new SpendStateCache(() => now);
    cache.set(query(), state, mark, window);
    cache.contend('0xabc');
    assert.equal(cache.get(query(), 3), undefined);
    cache.set(query(), state, mark, window);
    now = 999;
    assert.equal(cache.get(query(), 3), undefined, 'still contended');
    now = 1000;
    assert.deepEqual(cache.get(query(), 3), { state, mark, window });
  });
});
