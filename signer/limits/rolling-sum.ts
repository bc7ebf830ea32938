/**
 * A rolling sum over a fixed window, kept in a ring of BUCKETS + 1 time buckets of window / BUCKETS each
 * (a signature count, or raw token units). Pure: every method takes the time; nothing reads a clock.
 *
 * An entry counts for at least the whole window and at most one bucket more (1/60 of it): it leaves the
 * sum when its bucket has fallen entirely out of the window ending now, never before. So the sum is never
 * below the exact rolling sum of the window — a ceiling checked against it may refuse up to one bucket
 * early, never let more through.
 *
 * Protects against: memory that grows with traffic (a fixed ring per window, whatever the rate), and
 * amounts that lose precision (BigInt64Array: exact up to 2^63 − 1, which the configuration bounds).
 * Known limits: a clock that steps back keeps entries "in the future" live until it catches up (they
 * count longer, never shorter); it lives in memory (./limits-state-file.ts keeps it across restarts).
 */

/** Buckets per window: retry-after and expiry are exact to window / BUCKETS. */
export const BUCKETS = 60;

export class RollingSum {
  private readonly slots = BUCKETS + 1;
  /** The bucket number each slot holds (floor(ms / bucketMs)); -1 when never used. */
  private readonly bucketOf = new Float64Array(this.slots).fill(-1);
  private readonly sums = new BigInt64Array(this.slots);
  readonly bucketMs: number;
  /** The total as of bucket `totalBucket` (-1: recompute): sums only change on add/remove or a new bucket. */
  private cachedTotal = 0n;
  private totalBucket = -1;

  constructor(readonly windowMs: number) {
    if (!Number.isSafeInteger(windowMs) || windowMs <= 0 || windowMs % BUCKETS !== 0) throw new RangeError(`window of ${windowMs} ms is not a positive multiple of ${BUCKETS} ms`);
    this.bucketMs = windowMs / BUCKETS;
  }

  private live(bucket: number, nowMs: number): boolean {
    return bucket >= 0 && bucket >= Math.floor(nowMs / this.bucketMs) - BUCKETS;
  }

  /** Everything recorded whose bucket still overlaps the window ending at `nowMs`. */
  total(nowMs: number): bigint {
    const current = Math.floor(nowMs / this.bucketMs);
    if (current === this.totalBucket) return this.cachedTotal;
    let sum = 0n;
    for (let i = 0; i < this.slots; i++) if (this.live(this.bucketOf[i]!, nowMs)) sum += this.sums[i]!;
    this.cachedTotal = sum;
    this.totalBucket = current;
    return sum;
  }

  /** Records `amount` at `nowMs`; returns the bucket it went to (for `remove`). */
  add(nowMs: number, amount: bigint): number {
    let bucket = Math.floor(nowMs / this.bucketMs);
    const slot = bucket % this.slots;
    if (this.bucketOf[slot]! > bucket) {
      // The clock stepped back more than a window: the slot holds a later bucket; count this one there (longer, never shorter).
      bucket = this.bucketOf[slot]!;
    } else if (this.bucketOf[slot] !== bucket) {
      this.bucketOf[slot] = bucket;
      this.sums[slot] = 0n;
    }
    this.sums[slot] = this.sums[slot]! + amount;
    // Added to the current bucket: still counted in a total taken in this bucket.
    if (this.totalBucket === bucket) this.cachedTotal += amount;
    else this.totalBucket = -1;
    return bucket;
  }

  /** Takes back what `add` recorded in `bucket`, if that bucket is still held (else it already left). */
  remove(bucket: number, amount: bigint): void {
    const slot = bucket % this.slots;
    if (this.bucketOf[slot] !== bucket) return;
    const before = this.sums[slot]!;
    const left = before - amount;
    this.sums[slot] = left > 0n ? left : 0n;
    if (this.totalBucket >= 0 && bucket >= this.totalBucket - BUCKETS) this.cachedTotal -= before - this.sums[slot]!;
  }

  /**
   * Milliseconds from `nowMs` until at least `excess` has left the window (the oldest buckets leave
   * first); 0 when `excess` ≤ 0; the whole window (plus a bucket) when not even everything held is enough.
   */
  msUntilFreed(nowMs: number, excess: bigint): number {
    if (excess <= 0n) return 0;
    let freed = 0n;
    for (const [bucket, sum] of this.entries(nowMs)) {
      freed += sum;
      // The bucket is live while bucket ≥ floor(now / bucketMs) − BUCKETS: it leaves at (bucket + BUCKETS + 1) × bucketMs.
      if (freed >= excess) return Math.max(0, (bucket + BUCKETS + 1) * this.bucketMs - nowMs);
    }
    return this.windowMs + this.bucketMs;
  }

  /** The buckets still counted at `nowMs` that hold something, oldest first (for the state file). */
  entries(nowMs: number): Array<[bucket: number, sum: bigint]> {
    const held: Array<[number, bigint]> = [];
    for (let i = 0; i < this.slots; i++) if (this.live(this.bucketOf[i]!, nowMs) && this.sums[i]! > 0n) held.push([this.bucketOf[i]!, this.sums[i]!]);
    return held.sort((a, b) => a[0] - b[0]);
  }

  /** Puts back buckets `entries` returned (from the state file); those no longer counted at `nowMs` are dropped. */
  restore(nowMs: number, entries: ReadonlyArray<readonly [number, bigint]>): void {
    for (const [bucket, sum] of entries) {
      if (!Number.isSafeInteger(bucket) || !this.live(bucket, nowMs) || sum <= 0n) continue;
      const slot = bucket % this.slots;
      if (this.bucketOf[slot] !== bucket) {
        this.bucketOf[slot] = bucket;
        this.sums[slot] = 0n;
      }
      this.sums[slot] = this.sums[slot]! + sum;
    }
    this.totalBucket = -1;
  }

  /** The latest moment anything recorded here is still counted (ms); -Infinity when nothing ever was. */
  heldUntil(): number {
    let latest = -1;
    for (let i = 0; i < this.slots; i++) if (this.sums[i]! > 0n && this.bucketOf[i]! > latest) latest = this.bucketOf[i]!;
    return latest < 0 ? -Infinity : (latest + BUCKETS + 1) * this.bucketMs;
  }
}
