/**
 * What the pay path remembers between payments in this process — three in-process memories, no I/O:
 * - each wallet's snapshot as its last decided write leaves it (./pay-snapshot.ts `snapshotAfter`), set as
 *   soon as the write is decided, so it may count writes still queued in the writer: the wallet's next
 *   payment decides on it without reading;
 * - each capped buyer PAT's total that UTC day as this process knows it (read under the PAT's lock, plus
 *   every payment this process decided since), with the PAT's cap read with it;
 * - the Idempotency-Keys this process has seen.
 *
 * Defends: a decision on memory that may be wrong. A snapshot is given out only under the writer's current
 * generation of its wallet (a failed statement, or a refused write of the wallet, moves it on), within the
 * UTC day, week and month it was taken in, and while its velocity count can be known (or read on: `toReadOn`); a PAT's total only
 * under the writer's generation and within its day; a snapshot is never used for a key seen before (the
 * earlier attempt must be looked up); a PAT's room only under the lower of the cap read with its total and
 * the cap its bearer came with. Every memory is only a guess: the write's audit row at head + 1 fails if
 * anything changed the wallet meanwhile, and a PAT's total is held by PostgreSQL to the PAT's cap as
 * committed when the statement runs (CHECK pat_spend_totals_within_cap, ./store/decision-write.ts), so a cap
 * lowered through another process since either was read fails the write; the payment is then decided again
 * under the PAT's lock on the cap read there, and the memory is forgotten (./reserve-payment.ts) —
 * docs/adr/0006.
 * Memory: at most 10,000 snapshots, and at most `maxSnapshotBytes` of them (TREASURY_PAY_SNAPSHOT_MEMORY_BYTES,
 * 256 MiB by default) by their estimated size — SNAPSHOT_BASE_BYTES plus their policy's, recorded once when the
 * snapshot was read (./snapshot-policy.ts `policyBytesOf`: nothing is walked or serialised when a snapshot is
 * remembered); past either the least recently used is forgotten (its wallet's next payment reads it again), and a
 * snapshot larger than the whole budget is not remembered. Policies at their schema's bounds would otherwise have
 * let 10,000 snapshots hold ~1.5 GiB.
 * The Idempotency-Keys seen: at most 100,000, each held as the SHA-256 of its wallet and key (44 characters), not
 * as their text — one string of 64 bytes instead of the text joined from the request's wallet id and header,
 * which V8 keeps as two concatenations and both parts (≈ 190 bytes in four objects; 100,000 keys 12.1 MB instead
 * of 25.3 with the memory's own entries, `npm run bench:seen-keys`). Two keys with one digest would only send the
 * second to the slow path (read the earlier attempt): never a snapshot used for a key seen before.
 * Does not defend: keys evicted from memory (the authorization's UNIQUE (wallet_id, idempotency_key) fails
 * the write then, and the payment is decided again on a read that finds the earlier attempt).
 */
import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { policyWindows } from '../../../policy/policy-windows.js';
import { snapshotAt, snapshotReadPoint, windowKey, type PaySnapshot } from './pay-snapshot.js';
import type { VelocityReadPoint } from '../../../policy/velocity-window.js';
import type { CappedPat } from './pay-types.js';
import { isoDate } from './store/pay-statements.js';
import { policyBytesOf } from './snapshot-policy.js';
import { DEFAULT_PAY_SNAPSHOT_MEMORY_BYTES } from '../config/keep-bounds-config.js';

/** A buyer PAT's total on a UTC day (YYYY-MM-DD) and its daily cap (null: none), as read under its lock. */
export interface PatTotal {
  day: string;
  spentMicro: bigint;
  capMicro: bigint | null;
}

/**
 * A remembered snapshot's estimated size beside its policy: the wallet row, its state, a full velocity window and the
 * audit head, and the memory's own entry (measured: ~2.0 KB with a small policy).
 */
export const SNAPSHOT_BASE_BYTES = 2_048;

/** Snapshots remembered at most, whatever their size. */
const MAX_SNAPSHOTS = 10_000;

/** Idempotency-Keys remembered at most (the least recently seen forgotten first). */
export const MAX_SEEN_KEYS = 100_000;

interface RememberedSnapshot {
  snapshot: PaySnapshot;
  windowKey: string;
  generation: number;
}

/** A remembered snapshot's estimated size (see the header): a lookup, not a walk. */
export function snapshotBytes(snapshot: PaySnapshot): number {
  return SNAPSHOT_BASE_BYTES + policyBytesOf(snapshot.wallet.policy);
}

export interface SnapshotCacheOptions {
  /** TREASURY_PAY_SNAPSHOT_MEMORY_BYTES: the remembered snapshots' estimated bytes at most. */
  maxSnapshotBytes?: number | undefined;
}

export class SnapshotCache {
  private readonly snapshots: LRUCache<string, RememberedSnapshot>;
  private readonly patTotals = new LRUCache<string, PatTotal & { generation: number }>({
    max: 10_000,
  });
  private readonly seenKeys = new LRUCache<string, true>({ max: MAX_SEEN_KEYS });
  /** How many times a snapshot was forgotten: a read begun before a forget must not be remembered after it. */
  private forgets = 0;

  constructor(options: SnapshotCacheOptions = {}) {
    const maxSize = options.maxSnapshotBytes ?? DEFAULT_PAY_SNAPSHOT_MEMORY_BYTES;
    if (!Number.isSafeInteger(maxSize) || maxSize < 1) throw new RangeError('maxSnapshotBytes: a positive integer');
    this.snapshots = new LRUCache<string, RememberedSnapshot>({
      max: MAX_SNAPSHOTS,
      maxSize,
      sizeCalculation: (entry) => snapshotBytes(entry.snapshot),
    });
  }

  /** The remembered snapshots' estimated bytes, and how many they are (the budget's and the count's measure). */
  get snapshotMemory(): { bytes: number; count: number } {
    return { bytes: this.snapshots.calculatedSize, count: this.snapshots.size };
  }

  get forgetCount(): number {
    return this.forgets;
  }

  /** The wallet's remembered snapshot at `now`, if it was taken under `generation` and is still good then. */
  snapshot(walletId: string, generation: number, now: Date): PaySnapshot | undefined {
    const entry = this.current(walletId, generation, now);
    return entry && snapshotAt(entry.snapshot, now);
  }

  /**
   * The wallet's remembered snapshot (under `generation`, in `now`'s day, week and month) whose velocity window
   * must be read on at `now` before it can be used (./pay-snapshot.ts `snapshotReadPoint`); undefined otherwise.
   */
  toReadOn(
    walletId: string,
    generation: number,
    now: Date,
  ): { snapshot: PaySnapshot; windowSeconds: number; point: VelocityReadPoint } | undefined {
    const entry = this.current(walletId, generation, now);
    if (!entry) return undefined;
    const at = snapshotReadPoint(entry.snapshot, now);
    return at && { snapshot: entry.snapshot, ...at };
  }

  /** The wallet's remembered entry if it was taken under `generation` and in `now`'s UTC day, week and month. */
  private current(walletId: string, generation: number, now: Date): RememberedSnapshot | undefined {
    const entry = this.snapshots.get(walletId);
    return entry && entry.generation === generation && entry.windowKey === windowKey(now) ? entry : undefined;
  }

  /** Remembers what the wallet's snapshot is once a write decided at `at` (under `generation`) is written. */
  rememberSnapshot(walletId: string, snapshot: PaySnapshot, at: Date, generation: number): void {
    this.snapshots.set(walletId, { snapshot, windowKey: windowKey(at), generation });
  }

  /** Forgets the wallet's snapshot (another path changed its totals and audit chain, or its write failed). */
  forgetSnapshot(walletId: string): void {
    this.forgets++;
    this.snapshots.delete(walletId);
  }

  /** True the first time this process sees `key` for `walletId` (and remembers it; see the header). */
  firstUseOfKey(walletId: string, key: string): boolean {
    const id = seenKeyId(walletId, key);
    if (this.seenKeys.has(id)) return false;
    this.seenKeys.set(id, true);
    return true;
  }

  /**
   * Whether the remembered total of `pat` this UTC day (under `generation`) leaves room for `amountMicro` under
   * the lower of the cap read with it and the cap `pat`'s bearer came with (either may be older than the other).
   */
  patRoom(pat: CappedPat, amountMicro: bigint, now: Date, generation: number): boolean {
    const entry = this.patTotals.get(pat.tokenId);
    if (!entry || entry.generation !== generation || entry.day !== isoDate(policyWindows(now).dayStart)) return false;
    const cap = entry.capMicro !== null && entry.capMicro < pat.dailyCapMicro ? entry.capMicro : pat.dailyCapMicro;
    return entry.spentMicro + amountMicro <= cap;
  }

  /** The PAT's total that UTC day and its cap as read under its lock (with what the locked decision added). */
  rememberPatTotal(tokenId: string, total: PatTotal, generation: number): void {
    this.patTotals.set(tokenId, { ...total, generation });
  }

  /** Counts a payment decided on the remembered total (which patRoom just found). */
  countPatPayment(tokenId: string, amountMicro: bigint): void {
    this.patTotals.get(tokenId)!.spentMicro += amountMicro;
  }

  forgetPatTotal(tokenId: string): void {
    this.patTotals.delete(tokenId);
  }

  /**
   * Forgets the wallet's snapshot and, when a PAT is named, that PAT's day: what a write outside this process's
   * group commit moved past (a release, the expiry sweep, a policy change, a permit's audit row).
   */
  forgetWallet(walletId: string, patTokenId?: string): void {
    this.forgetSnapshot(walletId);
    if (patTokenId !== undefined) this.forgetPatTotal(patTokenId);
  }
}

/**
 * What the memory of seen keys holds for `key` of `walletId`: the wallet id's length first, so no two pairs join
 * alike.
 */
export function seenKeyId(walletId: string, key: string): string {
  return hash('sha256', `${walletId.length}:${walletId}|${key}`, 'base64');
}
