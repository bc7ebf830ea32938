/**
 * In-process guard against one payment being used twice at once or again after it settled: an authorization
 * (network, payer, nonce) is claimed while its request is in flight and remembered after settlement until it
 * expires (its validBefore, at least 10 minutes, at most 24 hours).
 *
 * Defends against: two concurrent requests carrying the same payment header both getting the content while
 * only one settles (x402 issue #1805), and cheap replays of a settled header within one process.
 * Does not defend against: replays across processes or after a restart, or when more than `maxEntries`
 * settled payments are remembered (the oldest are forgotten) — the token's on-chain nonce is the final guard,
 * the facilitator's verify or settle then fails and the buyer gets a 402.
 */
type Entry = { state: 'in_flight' } | { state: 'settled'; untilMs: number };

export class ReplayGuard {
  private readonly entries = new Map<string, Entry>();
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly clock: () => number = Date.now,
    private readonly maxEntries = 100_000,
  ) {}

  /** True when the key was free and is now claimed by the caller. */
  claim(key: string): boolean {
    const now = this.clock();
    const existing = this.entries.get(key);
    if (existing && (existing.state === 'in_flight' || existing.untilMs > now)) return false;
    if (existing) this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.prune(now);
    this.entries.set(key, { state: 'in_flight' });
    return true;
  }

  /** The payment was not used (no settlement): it may be presented again. */
  release(key: string): void {
    if (this.entries.get(key)?.state === 'in_flight') this.entries.delete(key);
  }

  /** The payment settled: refuse it until `validBeforeSeconds` (bounded to [10 min, 24 h] from now). */
  settled(key: string, validBeforeSeconds: number | undefined): void {
    const now = this.clock();
    const wanted = validBeforeSeconds === undefined ? now + 86_400_000 : validBeforeSeconds * 1000;
    const untilMs = Math.min(Math.max(wanted, now + 600_000), now + 86_400_000);
    this.entries.delete(key);
    this.entries.set(key, { state: 'settled', untilMs });
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Called when full. The sweep of expired entries walks the whole map, so it runs at most once a second;
   * otherwise the oldest settled entries (insertion order) are forgotten, which costs O(1) per claim.
   * In-flight claims are never dropped.
   */
  private prune(now: number): void {
    if (now - this.lastSweepMs >= 1000) {
      this.lastSweepMs = now;
      for (const [key, entry] of this.entries) {
        if (entry.state === 'settled' && entry.untilMs <= now) this.entries.delete(key);
      }
    }
    for (const [key, entry] of this.entries) {
      if (this.entries.size < this.maxEntries) break;
      if (entry.state === 'settled') this.entries.delete(key);
    }
  }
}
