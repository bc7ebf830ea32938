/**
 * A small, short-lived cache of public catalogue answers, per API process: the same query (its parsed,
 * normalised form as the key) within `ttlMs` of the read that answered it is answered from memory, and the same
 * query asked again while its read is under way waits for that read. Bounded by size, not only by count: an
 * answer is weighed by its JSON text (`size`, in characters: a page of rows with the schemas endpoints declare
 * weighs up to ~6.5 MB), the answers kept weigh at most `maxBytes` in all (DISCOVERY_CACHE_MAX_BYTES, 32 MiB),
 * one heavier than `maxEntryBytes` (DISCOVERY_CACHE_MAX_ENTRY_BYTES, 4 MiB) is served but not kept, and at most
 * `maxEntries` are kept; past a bound the oldest go first, in O(1) (lru-cache's order; a hit does not move an
 * answer). An answer is dropped when its `ttlMs` is over, read or not (lru-cache's `ttlAutopurge`: a timer per
 * answer, unref'd). `ttlMs` 0 turns it off.
 *
 * Defends: a burst of identical public reads each costing a catalogue query; the process's memory against many
 * distinct queries (whatever their pages weigh, the kept answers stay under `maxBytes`, and none outlives its
 * `ttlMs`). Does not defend: the cost of many distinct queries (each is a read: the per-address rate limit,
 * src/api/http/middleware/rate-limit.ts, and the service's read slots, ./discovery-read-slots.ts, bound those);
 * the heap an answer takes beyond its JSON text (parsed objects weigh more than their text: the bound is on the
 * text); an answer being served while it is weighed (one page at a time per read); freshness — a seller
 * suspended or unverified drops out of the catalogue within `ttlMs` (TREASURY_DISCOVERY_CACHE_MS).
 */
import { LRUCache } from 'lru-cache';

/** What the kept answers weigh at most in all, in characters of JSON text. */
export const DISCOVERY_CACHE_MAX_BYTES = 32 * 1024 * 1024;
/** An answer heavier than this (characters of JSON text) is served but not kept. */
export const DISCOVERY_CACHE_MAX_ENTRY_BYTES = 4 * 1024 * 1024;
/** At most this many answers are kept, however light. */
export const DISCOVERY_CACHE_MAX_ENTRIES = 1000;

export interface DiscoveryCacheOptions<T> {
  maxEntries?: number;
  maxBytes?: number;
  maxEntryBytes?: number;
  /** An answer's weight (a positive whole number); its JSON text's length by default. */
  size?: (value: T) => number;
  /** The clock the lifetimes are read on, in milliseconds (a test seam); performance.now() by default. */
  now?: () => number;
}

export class DiscoveryCache<T> {
  private readonly answers: LRUCache<string, { value: T }> | undefined;
  /** Reads under way, by key: one per key, each removed when it settles (bounded by the reads in flight). */
  private readonly loading = new Map<string, Promise<T>>();
  private readonly size: (value: T) => number;
  private readonly now: () => number;

  constructor(
    private readonly ttlMs: number,
    options: DiscoveryCacheOptions<T> = {},
  ) {
    this.size = options.size ?? ((value) => Math.max(1, JSON.stringify(value).length));
    this.now = options.now ?? (() => performance.now());
    this.answers =
      ttlMs === 0
        ? undefined
        : new LRUCache({
            max: options.maxEntries ?? DISCOVERY_CACHE_MAX_ENTRIES,
            maxSize: options.maxBytes ?? DISCOVERY_CACHE_MAX_BYTES,
            maxEntrySize: options.maxEntryBytes ?? DISCOVERY_CACHE_MAX_ENTRY_BYTES,
            ttl: ttlMs,
            ttlAutopurge: true,
            // Every check reads the clock (lru-cache otherwise reuses a reading for 1 ms of real time).
            ttlResolution: 0,
            perf: { now: this.now },
          });
  }

  /** The cached answer of `key`, or `load()`'s (kept only once it succeeded, and only if it fits). */
  async get(key: string, load: () => Promise<T>): Promise<T> {
    const answers = this.answers;
    if (answers === undefined) return load();
    const hit = answers.peek(key);
    if (hit) return hit.value;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const start = this.now();
    const value = load();
    this.loading.set(key, value);
    try {
      const answer = await value;
      const size = this.size(answer);
      const fresh = this.now() - start < this.ttlMs;
      if (fresh && size <= answers.maxEntrySize) answers.set(key, { value: answer }, { size, start });
      return answer;
    } finally {
      this.loading.delete(key);
    }
  }

  /** What the kept answers weigh in all, and how many there are (for tests and metrics). */
  get usage(): { bytes: number; entries: number } {
    return { bytes: this.answers?.calculatedSize ?? 0, entries: this.answers?.size ?? 0 };
  }
}
