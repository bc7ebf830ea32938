/**
 * The in-memory `payment-identifier` store (./payment-identifier-store.ts), the Koa middleware's default: one
 * store per middleware, bounded three ways — a retention window per completed answer, at most `maxEntries`
 * entries and at most `maxTotalBytes` of stored bodies. When full, the least recently used completed answers
 * are forgotten first, one at a time in O(1) (lru-cache's list: a Map whose oldest entry was deleted on every
 * claim made V8 walk every entry deleted before it, again at each claim — docs/performance.md, "The replay guard
 * when full"); an expired answer is forgotten when next looked up or when its turn comes. Pending claims are
 * never evicted, and expire after their TTL.
 *
 * Defends against: unbounded memory use by buyers choosing many ids or large answers; a crashed request
 * holding its id forever. Does not defend against: a restart or a second replica (each has its own map; use the
 * platform store, ./payment-identifier-platform-store.ts, to share one) — a forgotten id is a new request, and
 * a resent payload is then refused by the token's on-chain nonce.
 */
import { LRUCache } from 'lru-cache';
import type { BeginOutcome, PaymentIdentifierStore, PaymentIdKey, StoredAnswer } from './payment-identifier-store.js';

interface Pending {
  fingerprint: string;
  untilMs: number;
}

interface Done {
  fingerprint: string;
  untilMs: number;
  answer: StoredAnswer;
  bytes: number;
}

export interface MemoryStoreOptions {
  retentionSeconds: number;
  maxEntries: number;
  maxTotalBytes: number;
  clock?: () => number;
}

const keyOf = (k: PaymentIdKey) => JSON.stringify([k.scope, k.route, k.id]);
const sizeOf = (answer: StoredAnswer) =>
  (answer.body_base64?.length ?? 0) + Object.entries(answer.headers).reduce((n, [k, v]) => n + k.length + v.length, 0);

export class MemoryPaymentIdentifierStore implements PaymentIdentifierStore {
  /** Claims in flight: as many as requests in flight, and crashed ones until their TTL. */
  private readonly pending = new Map<string, Pending>();
  /** Completed answers, least recently used first; evicted only here (`pop`), never by the cache itself. */
  private readonly done: LRUCache<string, Done>;
  private totalBytes = 0;
  private readonly clock: () => number;

  constructor(private readonly options: MemoryStoreOptions) {
    this.clock = options.clock ?? Date.now;
    // One more than the bound: makeRoom evicts first, so the cache never drops an entry unseen.
    this.done = new LRUCache<string, Done>({ max: options.maxEntries + 1 });
  }

  get size(): number {
    return this.pending.size + this.done.size;
  }

  get storedBytes(): number {
    return this.totalBytes;
  }

  begin(key: PaymentIdKey, fingerprint: string, pendingTtlSeconds: number): Promise<BeginOutcome> {
    const now = this.clock();
    const k = keyOf(key);
    const claim = this.pending.get(k);
    if (claim && claim.untilMs > now)
      return Promise.resolve({ kind: claim.fingerprint === fingerprint ? 'in_flight' : 'conflict' });
    if (claim) this.pending.delete(k);
    const kept = this.done.peek(k);
    if (kept && kept.untilMs > now) {
      if (kept.fingerprint !== fingerprint) return Promise.resolve({ kind: 'conflict' });
      this.done.get(k); // most recently used now
      return Promise.resolve({ kind: 'stored', answer: kept.answer });
    }
    if (kept) this.forget(k, kept);
    this.makeRoom(now, 0);
    this.pending.set(k, { fingerprint, untilMs: now + pendingTtlSeconds * 1000 });
    return Promise.resolve({ kind: 'new' });
  }

  complete(key: PaymentIdKey, fingerprint: string, answer: StoredAnswer): Promise<void> {
    const k = keyOf(key);
    const claim = this.pending.get(k);
    if (claim?.fingerprint !== fingerprint) return Promise.resolve();
    const now = this.clock();
    const bytes = sizeOf(answer);
    this.pending.delete(k);
    this.makeRoom(now, bytes);
    this.done.set(k, { fingerprint, untilMs: now + this.options.retentionSeconds * 1000, answer, bytes });
    this.totalBytes += bytes;
    return Promise.resolve();
  }

  release(key: PaymentIdKey, fingerprint: string): Promise<void> {
    const k = keyOf(key);
    if (this.pending.get(k)?.fingerprint === fingerprint) this.pending.delete(k);
    return Promise.resolve();
  }

  private forget(k: string, entry: Done): void {
    this.done.delete(k);
    this.totalBytes -= entry.bytes;
  }

  /**
   * The least recently used answers go until one more entry of `bytes` fits; then, if claims alone fill it,
   * the expired claims.
   */
  private makeRoom(now: number, bytes: number): void {
    const full = () => this.size >= this.options.maxEntries || this.totalBytes + bytes > this.options.maxTotalBytes;
    while (full() && this.done.size > 0) {
      const oldest = this.done.pop()!;
      this.totalBytes -= oldest.bytes;
    }
    if (this.size >= this.options.maxEntries)
      for (const [k, claim] of this.pending) if (claim.untilMs <= now) this.pending.delete(k);
  }
}
