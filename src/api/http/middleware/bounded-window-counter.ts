/**
 * Counts events per key in fixed windows, in memory, holding at most `maxKeys` keys: when full, a new key
 * evicts the key whose window started first, in O(1) (lru-cache's order, which a key enters again when its
 * window restarts; a count within a window does not move it). Used for refused bearers per presented credential
 * (./rate-limit.ts), where every guess is a new key.
 *
 * Defends: memory growing with the number of distinct keys a client makes up (one entry per key, no timer);
 * the cost of a made-up key growing with the ones before it (a Map whose head was deleted for each new key
 * made V8 walk every key deleted before it: up to ~100 µs a refused bearer once full, against ~1).
 * Does not defend: a key evicted under a flood of new ones starts counting again from zero — the bound is
 * on memory, and what the count protects (a lookup) is cheap.
 */
import { LRUCache } from 'lru-cache';

export interface WindowCount {
  /** Events of the key within its current window (0 when it has none). */
  count: number;
  /** Milliseconds until the key's window ends (0 when it has none). */
  msBeforeReset: number;
}

export class BoundedWindowCounter {
  private readonly entries: LRUCache<string, { count: number; resetAt: number }>;

  constructor(
    private readonly windowMs: number,
    maxKeys: number,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new LRUCache({ max: maxKeys });
  }

  /** Counts one event of `key`; its count in the current window, this one included. */
  hit(key: string): WindowCount {
    const at = this.now();
    const entry = this.entries.peek(key);
    if (entry && entry.resetAt > at) {
      entry.count++;
      return { count: entry.count, msBeforeReset: entry.resetAt - at };
    }
    // A new window: the key takes the newest place (the least recent one goes when full).
    this.entries.set(key, { count: 1, resetAt: at + this.windowMs });
    return { count: 1, msBeforeReset: this.windowMs };
  }

  /** The key's count in its current window, without counting. */
  peek(key: string): WindowCount {
    const at = this.now();
    const entry = this.entries.peek(key);
    if (!entry || entry.resetAt <= at) return { count: 0, msBeforeReset: 0 };
    return { count: entry.count, msBeforeReset: entry.resetAt - at };
  }
}
