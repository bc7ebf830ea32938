/**
 * Counts events per key in fixed windows, in memory, holding at most `maxKeys` keys: when full, a new key
 * evicts the key whose window started first (a Map keeps insertion order, and a key is re-inserted when its
 * window restarts). Used for refused bearers per presented credential (./rate-limit.ts), where every guess is
 * a new key.
 *
 * Defends: memory growing with the number of distinct keys a client makes up (one entry per key, no timer).
 * Does not defend: a key evicted under a flood of new ones starts counting again from zero — the bound is
 * on memory, and what the count protects (a lookup) is cheap.
 */

export interface WindowCount {
  /** Events of the key within its current window (0 when it has none). */
  count: number;
  /** Milliseconds until the key's window ends (0 when it has none). */
  msBeforeReset: number;
}

export class BoundedWindowCounter {
  private readonly entries = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly maxKeys: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one event of `key`; its count in the current window, this one included. */
  hit(key: string): WindowCount {
    const at = this.now();
    const entry = this.entries.get(key);
    if (entry && entry.resetAt > at) {
      entry.count++;
      return { count: entry.count, msBeforeReset: entry.resetAt - at };
    }
    if (entry) this.entries.delete(key);
    else if (this.entries.size >= this.maxKeys) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { count: 1, resetAt: at + this.windowMs });
    return { count: 1, msBeforeReset: this.windowMs };
  }

  /** The key's count in its current window, without counting. */
  peek(key: string): WindowCount {
    const at = this.now();
    const entry = this.entries.get(key);
    if (!entry || entry.resetAt <= at) return { count: 0, msBeforeReset: 0 };
    return { count: entry.count, msBeforeReset: entry.resetAt - at };
  }
}
