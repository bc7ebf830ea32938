/**
 * The in-memory `payment-identifier` store (./payment-identifier-store.ts), the Koa middleware's default: one
 * map per middleware, bounded three ways — a retention window per completed answer, at most `maxEntries`
 * entries and at most `maxTotalBytes` of stored bodies. When full, the least recently used completed answers
 * are forgotten first (a Map kept in use order); pending claims are never evicted, and expire after their TTL.
 *
 * Defends against: unbounded memory use by buyers choosing many ids or large answers; a crashed request
 * holding its id forever. Does not defend against: a restart or a second replica (each has its own map; use the
 * platform store, ./payment-identifier-platform-store.ts, to share one) — a forgotten id is a new request, and
 * a resent payload is then refused by the token's on-chain nonce.
 */
import type { BeginOutcome, PaymentIdentifierStore, PaymentIdKey, StoredAnswer } from './payment-identifier-store.js';

type Entry =
  | { state: 'pending'; fingerprint: string; untilMs: number }
  | { state: 'done'; fingerprint: string; untilMs: number; answer: StoredAnswer; bytes: number };

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
  private readonly entries = new Map<string, Entry>();
  private totalBytes = 0;
  private readonly clock: () => number;

  constructor(private readonly options: MemoryStoreOptions) {
    this.clock = options.clock ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  get storedBytes(): number {
    return this.totalBytes;
  }

  begin(key: PaymentIdKey, fingerprint: string, pendingTtlSeconds: number): Promise<BeginOutcome> {
    const now = this.clock();
    const k = keyOf(key);
    const entry = this.entries.get(k);
    if (entry && entry.untilMs > now) {
      if (entry.fingerprint !== fingerprint) return Promise.resolve({ kind: 'conflict' });
      if (entry.state === 'pending') return Promise.resolve({ kind: 'in_flight' });
      this.touch(k, entry);
      return Promise.resolve({ kind: 'stored', answer: entry.answer });
    }
    if (entry) this.drop(k);
    this.makeRoom(now, 0);
    this.entries.set(k, { state: 'pending', fingerprint, untilMs: now + pendingTtlSeconds * 1000 });
    return Promise.resolve({ kind: 'new' });
  }

  complete(key: PaymentIdKey, fingerprint: string, answer: StoredAnswer): Promise<void> {
    const k = keyOf(key);
    const entry = this.entries.get(k);
    if (entry?.state !== 'pending' || entry.fingerprint !== fingerprint) return Promise.resolve();
    const now = this.clock();
    const bytes = sizeOf(answer);
    this.entries.delete(k);
    this.makeRoom(now, bytes);
    this.entries.set(k, {
      state: 'done',
      fingerprint,
      untilMs: now + this.options.retentionSeconds * 1000,
      answer,
      bytes,
    });
    this.totalBytes += bytes;
    return Promise.resolve();
  }

  release(key: PaymentIdKey, fingerprint: string): Promise<void> {
    const k = keyOf(key);
    const entry = this.entries.get(k);
    if (entry?.state === 'pending' && entry.fingerprint === fingerprint) this.entries.delete(k);
    return Promise.resolve();
  }

  /** Most recently used last: a replayed answer moves to the end. */
  private touch(k: string, entry: Entry): void {
    this.entries.delete(k);
    this.entries.set(k, entry);
  }

  private drop(k: string): void {
    const entry = this.entries.get(k);
    if (entry?.state === 'done') this.totalBytes -= entry.bytes;
    this.entries.delete(k);
  }

  /** Expired entries go first, then the least recently used answers, until one more entry of `bytes` fits. */
  private makeRoom(now: number, bytes: number): void {
    const fits = () =>
      this.entries.size < this.options.maxEntries && this.totalBytes + bytes <= this.options.maxTotalBytes;
    if (fits()) return;
    for (const [k, entry] of this.entries) if (entry.untilMs <= now) this.drop(k);
    for (const [k, entry] of this.entries) {
      if (fits()) return;
      if (entry.state === 'done') this.drop(k);
    }
  }
}
