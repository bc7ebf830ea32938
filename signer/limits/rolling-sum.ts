/**
 * A rolling sum over a fixed window (a signature count, or raw token units), kept as time buckets of
 * window / BUCKETS each: only buckets that hold something are stored, oldest first, so a wallet that
 * signs once a day costs a few bytes and a busy one at most BUCKETS + 1 buckets per window. Pure: every
 * method takes the time; nothing reads a clock.
 *
 * An entry counts for at least the whole window and at most one bucket more (1/60 of it): it leaves the
 * sum when its bucket has fallen entirely out of the window ending now, never before. So the sum is never
 * below the exact rolling sum of the window — a ceiling checked against it may refuse up to one bucket
 * early, never let more through. The running total is kept as buckets come and go: a check is O(1)
 * amortised.
 *
 * Protects against: memory that grows with traffic (at most BUCKETS + 1 buckets per window, whatever the
 * rate), and amounts that lose precision (bigint; the configuration bounds every ceiling below 10^18).
 * Known limits: windows run on the signer's clock as it goes forward; a clock stepping back does not bring
 * back what already left (an entry added "before" a later bucket is counted in that later one: longer,
 * never shorter). It lives in memory (./limits-state-file.ts keeps it across restarts).
 */

/** Buckets per window: retry-after and expiry are exact to window / BUCKETS. */
export const BUCKETS = 60;

export class RollingSum {
  /** Bucket numbers (floor(ms / bucketMs)) that hold something, ascending, and their sums. */
  private buckets: number[] = [];
  private sums: bigint[] = [];
  /** Sum of `sums`. */
  private running = 0n;
  readonly bucketMs: number;

  constructor(readonly windowMs: number) {
    if (!Number.isSafeInteger(windowMs) || windowMs <= 0 || windowMs % BUCKETS !== 0)
      throw new RangeError(`window of ${windowMs} ms is not a positive multiple of ${BUCKETS} ms`);
    this.bucketMs = windowMs / BUCKETS;
  }

  /** The oldest bucket still counted at `nowMs` (a bucket leaves at (bucket + BUCKETS + 1) × bucketMs). */
  private oldestLive(nowMs: number): number {
    return Math.floor(nowMs / this.bucketMs) - BUCKETS;
  }

  /** Drops the buckets that left the window ending at `nowMs`. */
  private prune(nowMs: number): void {
    const oldest = this.oldestLive(nowMs);
    let n = 0;
    while (n < this.buckets.length && this.buckets[n]! < oldest) this.running -= this.sums[n++]!;
    if (n === this.buckets.length) {
      // Fresh empty arrays: an array that once held many buckets keeps its capacity.
      if (n > 0) [this.buckets, this.sums] = [[], []];
    } else if (n > 0) {
      this.buckets.splice(0, n);
      this.sums.splice(0, n);
    }
  }

  /** Everything recorded whose bucket still overlaps the window ending at `nowMs`. */
  total(nowMs: number): bigint {
    this.prune(nowMs);
    return this.running;
  }

  /** Records `amount` at `nowMs`; returns the bucket it went to (for `remove`). */
  add(nowMs: number, amount: bigint): number {
    this.prune(nowMs);
    const bucket = Math.floor(nowMs / this.bucketMs);
    const last = this.buckets.length - 1;
    this.running += amount;
    if (last >= 0 && this.buckets[last]! >= bucket) {
      // The current bucket, or a later one left by a clock that stepped back: counted there (longer, never shorter).
      this.sums[last] = this.sums[last]! + amount;
      return this.buckets[last]!;
    }
    if (last < 0) {
      // Array literals of one element: a push onto an empty array would reserve room for 16.
      [this.buckets, this.sums] = [[bucket], [amount]];
    } else {
      this.buckets.push(bucket);
      this.sums.push(amount);
    }
    return bucket;
  }

  /** Takes back what `add` recorded in `bucket`, if that bucket is still held (else it already left). */
  remove(bucket: number, amount: bigint): void {
    for (let i = this.buckets.length - 1; i >= 0 && this.buckets[i]! >= bucket; i--) {
      if (this.buckets[i] !== bucket) continue;
      const taken = amount < this.sums[i]! ? amount : this.sums[i]!;
      this.sums[i] = this.sums[i]! - taken;
      this.running -= taken;
      return;
    }
  }

  /**
   * Milliseconds from `nowMs` until at least `excess` has left the window (the oldest buckets leave
   * first); 0 when `excess` ≤ 0; the whole window (plus a bucket) when not even everything held is enough.
   */
  msUntilFreed(nowMs: number, excess: bigint): number {
    if (excess <= 0n) return 0;
    this.prune(nowMs);
    let freed = 0n;
    for (let i = 0; i < this.buckets.length; i++) {
      freed += this.sums[i]!;
      if (freed >= excess) return Math.max(0, (this.buckets[i]! + BUCKETS + 1) * this.bucketMs - nowMs);
    }
    return this.windowMs + this.bucketMs;
  }

  /** The buckets still counted at `nowMs` that hold something, oldest first (for the state file). */
  entries(nowMs: number): Array<[bucket: number, sum: bigint]> {
    this.prune(nowMs);
    const held: Array<[number, bigint]> = [];
    for (let i = 0; i < this.buckets.length; i++) if (this.sums[i]! > 0n) held.push([this.buckets[i]!, this.sums[i]!]);
    return held;
  }

  /** Adds buckets `entries` returned (from the state file); those no longer counted at `nowMs` are dropped. */
  restore(nowMs: number, entries: ReadonlyArray<readonly [number, bigint]>): void {
    this.prune(nowMs);
    const oldest = this.oldestLive(nowMs);
    const merged = new Map<number, bigint>(this.buckets.map((b, i) => [b, this.sums[i]!]));
    for (const [bucket, sum] of entries) {
      if (!Number.isSafeInteger(bucket) || bucket < oldest || sum <= 0n) continue;
      merged.set(bucket, (merged.get(bucket) ?? 0n) + sum);
    }
    const sorted = [...merged].sort((a, b) => a[0] - b[0]);
    this.buckets = sorted.map(([bucket]) => bucket);
    this.sums = sorted.map(([, sum]) => sum);
    this.running = this.sums.reduce((total, sum) => total + sum, 0n);
  }

  /** The latest moment anything recorded here is still counted (ms); -Infinity when nothing is held. */
  heldUntil(): number {
    for (let i = this.buckets.length - 1; i >= 0; i--)
      if (this.sums[i]! > 0n) return (this.buckets[i]! + BUCKETS + 1) * this.bucketMs;
    return -Infinity;
  }
}
