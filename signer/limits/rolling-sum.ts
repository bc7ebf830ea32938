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
 * rate), and amounts that lose precision (bigint arithmetic; the configuration bounds every ceiling below 10^18).
 * The sums are kept in a BigInt64Array, not as bigint values: a bigint is an object of its own, and one kept for the
 * seconds between a wallet's signatures outlives two young collections and fills the old generation (eight a
 * signature under four windows; docs/performance.md, "What the signer promotes, and the load generator's own
 * collections"). A sum saturates at 2^63 − 1 instead of wrapping: above every ceiling, so a ceiling checked against
 * it still refuses; a saturated running total is counted again from its buckets when one leaves or is taken back,
 * never lowered by what left.
 * Known limits: windows run on the signer's clock as it goes forward; a clock stepping back does not bring
 * back what already left (an entry added "before" a later bucket is counted in that later one: longer,
 * never shorter). It lives in memory (./limits-state-file.ts keeps it across restarts).
 */

/** Buckets per window: retry-after and expiry are exact to window / BUCKETS. */
export const BUCKETS = 60;

/** The largest sum a slot holds (2^63 − 1): above every configured ceiling (< 10^18). */
const SUM_MAX = 2n ** 63n - 1n;

/** `a + b` for non-negative sums, at most SUM_MAX. */
function saturatingAdd(a: bigint, b: bigint): bigint {
  const sum = a + b;
  return sum > SUM_MAX ? SUM_MAX : sum;
}

/** Slots a fresh window reserves: the running total and one bucket. */
const FIRST_CAPACITY = 2;

export class RollingSum {
  /** Bucket numbers (floor(ms / bucketMs)) that hold something, ascending. */
  private buckets: number[] = [];
  /** Slot 0: the running total (the sum of the others); slot 1 + i: the sum of `buckets[i]`. */
  private sums = new BigInt64Array(FIRST_CAPACITY);
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
    const held = this.buckets.length;
    if (held === 0 || this.buckets[0]! >= oldest) return;
    let n = 0;
    const saturated = this.sums[0] === SUM_MAX;
    while (n < held && this.buckets[n]! < oldest) this.sums[0] = this.sums[0]! - this.sums[1 + n++]!;
    if (n === held) {
      // Fresh empty storage: what once held many buckets keeps its capacity.
      this.buckets = [];
      if (this.sums.length > FIRST_CAPACITY) this.sums = new BigInt64Array(FIRST_CAPACITY);
      else this.sums[0] = 0n;
    } else {
      this.buckets.splice(0, n);
      this.sums.copyWithin(1, 1 + n, 1 + held);
      if (saturated) this.recount();
    }
  }

  /**
   * The running total counted again from the buckets: a saturated total is below what it stands for, so taking a
   * bucket's sum from it would leave less than the buckets still held.
   */
  private recount(): void {
    let total = 0n;
    for (let i = 0; i < this.buckets.length; i++) total = saturatingAdd(total, this.sums[1 + i]!);
    this.sums[0] = total;
  }

  /** Everything recorded whose bucket still overlaps the window ending at `nowMs`. */
  total(nowMs: number): bigint {
    this.prune(nowMs);
    return this.sums[0]!;
  }

  /** Records `amount` at `nowMs`; returns the bucket it went to (for `remove`). */
  add(nowMs: number, amount: bigint): number {
    this.prune(nowMs);
    const bucket = Math.floor(nowMs / this.bucketMs);
    const last = this.buckets.length - 1;
    this.sums[0] = saturatingAdd(this.sums[0]!, amount);
    if (last >= 0 && this.buckets[last]! >= bucket) {
      // The current bucket, or a later one left by a clock that stepped back: counted there (longer, never shorter).
      this.sums[1 + last] = saturatingAdd(this.sums[1 + last]!, amount);
      return this.buckets[last]!;
    }
    this.append(bucket, amount);
    return bucket;
  }

  /** A new last bucket holding `sum` (the running total already counts it); the storage doubles when full. */
  private append(bucket: number, sum: bigint): void {
    const held = this.buckets.length;
    if (held === 0) {
      // An array literal of one element: a push onto an empty array would reserve room for 16.
      this.buckets = [bucket];
    } else {
      this.buckets.push(bucket);
    }
    if (1 + held === this.sums.length) {
      const grown = new BigInt64Array(2 * this.sums.length);
      grown.set(this.sums);
      this.sums = grown;
    }
    this.sums[1 + held] = sum;
  }

  /** Takes back what `add` recorded in `bucket`, if that bucket is still held (else it already left). */
  remove(bucket: number, amount: bigint): void {
    for (let i = this.buckets.length - 1; i >= 0 && this.buckets[i]! >= bucket; i--) {
      if (this.buckets[i] !== bucket) continue;
      const held = this.sums[1 + i]!;
      const taken = amount < held ? amount : held;
      this.sums[1 + i] = held - taken;
      if (this.sums[0] === SUM_MAX) this.recount();
      else this.sums[0] = this.sums[0]! - taken;
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
      freed += this.sums[1 + i]!;
      if (freed >= excess) return Math.max(0, (this.buckets[i]! + BUCKETS + 1) * this.bucketMs - nowMs);
    }
    return this.windowMs + this.bucketMs;
  }

  /** The buckets still counted at `nowMs` that hold something, oldest first (for the state file). */
  entries(nowMs: number): Array<[bucket: number, sum: bigint]> {
    this.prune(nowMs);
    const held: Array<[number, bigint]> = [];
    for (let i = 0; i < this.buckets.length; i++) {
      const sum = this.sums[1 + i]!;
      if (sum > 0n) held.push([this.buckets[i]!, sum]);
    }
    return held;
  }

  /** Adds buckets `entries` returned (from the state file); those no longer counted at `nowMs` are dropped. */
  restore(nowMs: number, entries: ReadonlyArray<readonly [number, bigint]>): void {
    this.prune(nowMs);
    const oldest = this.oldestLive(nowMs);
    const merged = new Map<number, bigint>(this.buckets.map((b, i) => [b, this.sums[1 + i]!]));
    for (const [bucket, sum] of entries) {
      if (!Number.isSafeInteger(bucket) || bucket < oldest || sum <= 0n) continue;
      merged.set(bucket, saturatingAdd(merged.get(bucket) ?? 0n, sum));
    }
    const sorted = [...merged].sort((a, b) => a[0] - b[0]);
    this.buckets = [];
    this.sums = new BigInt64Array(FIRST_CAPACITY);
    for (const [bucket, sum] of sorted) {
      this.sums[0] = saturatingAdd(this.sums[0]!, sum);
      this.append(bucket, sum);
    }
  }

  /** The latest moment anything recorded here is still counted (ms); -Infinity when nothing is held. */
  heldUntil(): number {
    for (let i = this.buckets.length - 1; i >= 0; i--)
      if (this.sums[1 + i]! > 0n) return (this.buckets[i]! + BUCKETS + 1) * this.bucketMs;
    return -Infinity;
  }
}
