/**
 * What the gate saw of its sellers' origins, in memory (docs/gate.md#uptime): per endpoint and UTC hour, how many
 * proxied requests the origin answered (any status below 500) and how many failed (5xx, unreachable, timed out).
 * `take()` hands the buckets over for a report; `restore()` puts back those a failed report did not deliver.
 * Pure apart from the clock it is given.
 *
 * Defends against: memory growing with traffic or with a platform outage (at most `maxBuckets` endpoint-hours;
 * beyond that new ones are dropped and counted; a count stops at the report schema's bound). Does not defend
 * against: counts lost when the process exits before its last report (best effort, like the ledger reports).
 */
import { MAX_UPTIME_BUCKETS, MAX_UPTIME_COUNT, type UptimeBucket } from '../shared/uptime-report-schema.js';

const HOUR_MS = 3_600_000;

export class UptimeBuckets {
  private readonly buckets = new Map<string, UptimeBucket>();
  /** Observations dropped because the map was full. */
  dropped = 0;
  /** The hour last spelled (`hourOf`). */
  private lastHour = { startMs: Number.NaN, iso: '' };

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxBuckets = 20 * MAX_UPTIME_BUCKETS,
  ) {}

  get size(): number {
    return this.buckets.size;
  }

  /** One proxied request of `endpointId`: did the origin answer? */
  record(endpointId: string, answered: boolean): void {
    this.add({
      endpoint_id: endpointId,
      hour: this.hourOf(this.now()),
      answered: answered ? 1 : 0,
      failed: answered ? 0 : 1,
    });
  }

  /** The UTC hour of `ms` as its bucket names it, spelled once per hour rather than once per request. */
  private hourOf(ms: number): string {
    const startMs = Math.floor(ms / HOUR_MS) * HOUR_MS;
    if (startMs !== this.lastHour.startMs) this.lastHour = { startMs, iso: new Date(startMs).toISOString() };
    return this.lastHour.iso;
  }

  /** Up to `max` buckets, removed from memory (the oldest first). */
  take(max = MAX_UPTIME_BUCKETS): UptimeBucket[] {
    const out: UptimeBucket[] = [];
    for (const [key, bucket] of this.buckets) {
      if (out.length >= max) break;
      out.push(bucket);
      this.buckets.delete(key);
    }
    return out;
  }

  /** Puts back buckets a report could not deliver (added to what was recorded since). */
  restore(buckets: readonly UptimeBucket[]): void {
    for (const b of buckets) this.add(b);
  }

  private add(b: UptimeBucket): void {
    const key = `${b.endpoint_id} ${b.hour}`;
    const current = this.buckets.get(key);
    if (current) {
      current.answered = Math.min(current.answered + b.answered, MAX_UPTIME_COUNT);
      current.failed = Math.min(current.failed + b.failed, MAX_UPTIME_COUNT);
      return;
    }
    if (this.buckets.size >= this.maxBuckets) {
      this.dropped += b.answered + b.failed;
      return;
    }
    this.buckets.set(key, { ...b });
  }
}
