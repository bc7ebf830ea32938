/**
 * A small, short-lived cache of public catalogue answers, per API process: the same query (its parsed,
 * normalised form as the key) within `ttlMs` is answered from memory. At most `maxEntries` answers are kept;
 * past that the oldest is dropped first, in O(1) (lru-cache's order; a hit does not move an answer). `ttlMs` 0
 * turns it off.
 *
 * Defends: a burst of identical public reads each costing a catalogue query. Does not defend: many distinct
 * queries (the per-address rate limit bounds those: src/api/http/middleware/rate-limit.ts); freshness — a
 * seller suspended or unverified drops out of the catalogue within `ttlMs` (TREASURY_DISCOVERY_CACHE_MS).
 */
import { LRUCache } from 'lru-cache';

export class DiscoveryCache<T> {
  private readonly entries: LRUCache<string, { at: number; value: Promise<T> }>;

  constructor(
    private readonly ttlMs: number,
    maxEntries = 1000,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  /** The cached answer of `key`, or `load()`'s (kept only once it succeeded). */
  async get(key: string, load: () => Promise<T>): Promise<T> {
    if (this.ttlMs === 0) return load();
    const now = this.now();
    const hit = this.entries.peek(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = load();
    this.entries.set(key, { at: now, value });
    try {
      return await value;
    } catch (err) {
      if (this.entries.peek(key)?.value === value) this.entries.delete(key);
      throw err;
    }
  }
}
