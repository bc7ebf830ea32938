/**
 * The signer's own rolling ceilings per wallet address: at most so many raw token units, so many
 * signatures, and so many policy receipts, per rolling window (TREASURY_SIGNER_WALLET_* in
 * ../config/signer-config.ts — the signer's environment only; no protocol message reaches them). `take` checks
 * every ceiling its kind counts in and, only if all hold, records the signature in all of them, synchronously:
 * the service calls it between its checks and the HSM, with no await in between, so concurrent requests cannot
 * both pass on the same headroom. A payment or permit (`signature`) counts in the amount and signature ceilings;
 * a policy receipt (`receipt`) in the receipt ceilings only — so a reader asking for receipts never spends the
 * headroom a wallet's payments need. The clock is injected (milliseconds); the class reads nothing else.
 *
 * Protects against: a compromised or buggy front asking for many signatures, each within the static
 * invariants, that together drain a wallet — what one wallet can lose per hour and per day is bounded by
 * the signer's own configuration, whatever the front's policies say. An `upto` (Permit2) authorization
 * counts its signed maximum: that is what it can move. A signature that never leaves the signer (the HSM
 * failed, the key recovers to another address) is given back (`giveBack`).
 * Known limits — what this does NOT defend:
 *   - a restart without a state file: the windows live in memory. With TREASURY_SIGNER_LIMITS_STATE_FILE
 *     (./limits-state-file.ts; set in the Dockerfile) they are saved every second and on shutdown and read
 *     back at start, so a restart forgets at most the last second's signatures (a kill -9 or a crash);
 *     without it they start empty (one more window's worth per wallet after each restart).
 *   - many wallets: ceilings are per wallet address; a front that controls many funded wallets can take each
 *     up to its ceiling (there is no global ceiling).
 *   - amounts are summed across chains and tokens as raw units (all allowed tokens are 6-decimal USDC):
 *     conservative, never looser.
 *   - receipts and payments share the HSM/KMS itself: the receipt ceilings bound what one wallet's receipts take
 *     of it, not what many wallets' do (the API's per-account `receipt` bucket bounds that).
 * Memory: about 1 KB per wallet that signed within the last day (100,000 such wallets ≈ 100 MB); wallets with
 * nothing left in any window are forgotten every few thousand signatures.
 */
import { counterpartyKey } from '../../policy/counterparty-address.js';
import type { SignerLimitName } from '../protocol/signer-protocol.js';
import { RollingSum } from './rolling-sum.js';

export interface WalletLimit {
  name: Exclude<SignerLimitName, 'per_signature'>;
  /**
   * `amount`: raw token units a payment signs for; `signatures`: one per payment or permit signature;
   * `receipts`: one per policy receipt.
   */
  measure: 'amount' | 'signatures' | 'receipts';
  windowSeconds: number;
  max: bigint;
}

/** A refused request: which ceiling, what is left of it, and when a request of the same size fits again. */
export interface LimitRefusal {
  limit: WalletLimit['name'];
  max: bigint;
  headroom: bigint;
  windowSeconds: number;
  retryAfterSeconds: number;
}

/** What a signature is: a payment or permit (`signature`), or a policy receipt (`receipt`). */
export type SignatureKind = 'signature' | 'receipt';

/** What `take` recorded, to be given back if the signature never leaves the signer. */
export interface LimitReceipt {
  readonly wallet: string;
  readonly amount: bigint;
  readonly kind: SignatureKind;
  /** The bucket each limit recorded it in; NOT_COUNTED for a limit its kind does not count in. */
  readonly buckets: readonly number[];
}

/** A limit's entry in `LimitReceipt.buckets` when the signature's kind does not count in it. */
const NOT_COUNTED = -1;

/** What one signature of `kind` and `amount` weighs in `limit`; undefined when its kind does not count there. */
function weightIn(limit: WalletLimit, kind: SignatureKind, amount: bigint): bigint | undefined {
  if ((limit.measure === 'receipts') !== (kind === 'receipt')) return undefined;
  return limit.measure === 'amount' ? amount : 1n;
}

export type TakeOutcome = { ok: true; receipt: LimitReceipt } | { ok: false; refusal: LimitRefusal };

/** What `snapshot` returns and `restore` takes (the state file's windows, validated by ./limits-state-format.ts). */
export interface LimiterSnapshot {
  v: 1;
  wallets: Record<string, Record<string, Array<[number, string]>>>;
}

/** Every this many takes, wallets with nothing left in any window are forgotten. */
const SWEEP_EVERY = 4096;

export class WalletLimiter {
  private readonly wallets = new Map<string, RollingSum[]>();
  private takes = 0;
  private changeCount = 0;
  /** Wallets changed since the last `drainChanged` (undefined until its first call: nobody is asking). */
  private changed: Set<string> | undefined;

  constructor(
    private readonly limits: readonly WalletLimit[],
    private readonly nowMs: () => number = Date.now,
  ) {}

  /**
   * Checks every ceiling of `wallet` that a signature of `kind` counts in for one more of `amount`; records it in
   * all of them only if all hold (the others are neither checked nor touched).
   */
  take(wallet: string, amount: bigint, kind: SignatureKind = 'signature'): TakeOutcome {
    const now = this.nowMs();
    const key = counterpartyKey(wallet);
    let sums = this.wallets.get(key);
    if (sums) {
      for (let i = 0; i < this.limits.length; i++) {
        const limit = this.limits[i]!;
        const sum = sums[i]!;
        const add = weightIn(limit, kind, amount);
        if (add === undefined) continue;
        const used = sum.total(now);
        if (used + add <= limit.max) continue;
        const headroom = used < limit.max ? limit.max - used : 0n;
        return {
          ok: false,
          refusal: {
            limit: limit.name,
            max: limit.max,
            headroom,
            windowSeconds: limit.windowSeconds,
            retryAfterSeconds: Math.ceil(sum.msUntilFreed(now, used + add - limit.max) / 1000),
          },
        };
      }
    } else {
      // A first signature only has to fit each ceiling on its own (the configuration keeps max_per_signature ≤ every amount ceiling).
      for (const limit of this.limits) {
        if ((weightIn(limit, kind, amount) ?? 0n) <= limit.max) continue;
        return {
          ok: false,
          refusal: {
            limit: limit.name,
            max: limit.max,
            headroom: limit.max,
            windowSeconds: limit.windowSeconds,
            retryAfterSeconds: limit.windowSeconds,
          },
        };
      }
      sums = this.limits.map((l) => new RollingSum(l.windowSeconds * 1000));
      this.wallets.set(key, sums);
    }
    const buckets = this.limits.map((limit, i) => {
      const add = weightIn(limit, kind, amount);
      return add === undefined ? NOT_COUNTED : sums.at(i)!.add(now, add);
    });
    this.changeCount++;
    this.changed?.add(key);
    if (++this.takes % SWEEP_EVERY === 0) this.sweep(now);
    return { ok: true, receipt: { wallet: key, amount, kind, buckets } };
  }

  /** Takes back a signature `take` recorded that never left the signer. */
  giveBack(receipt: LimitReceipt): void {
    const sums = this.wallets.get(receipt.wallet);
    if (!sums) return;
    this.limits.forEach((limit, i) => {
      const bucket = receipt.buckets[i]!;
      const weight = weightIn(limit, receipt.kind, receipt.amount);
      if (bucket !== NOT_COUNTED && weight !== undefined) sums[i]!.remove(bucket, weight);
    });
    this.changeCount++;
    this.changed?.add(receipt.wallet);
  }

  /**
   * What every wallet still has counted, by limit name: `{ wallet: { limit: [[bucket, sum], …] } }` with sums
   * as decimal strings (for the state file; buckets are per limit name, whose window never changes).
   */
  snapshot(): LimiterSnapshot {
    const now = this.nowMs();
    const wallets: LimiterSnapshot['wallets'] = {};
    for (const [key, sums] of this.wallets) {
      const held = this.heldIn(sums, now);
      if (held) wallets[key] = held;
    }
    return { v: 1, wallets };
  }

  /** One wallet's part of `snapshot` (`key` as `keys` and `drainChanged` give it); undefined when it holds nothing. */
  held(key: string): LimiterSnapshot['wallets'][string] | undefined {
    const sums = this.wallets.get(key);
    return sums && this.heldIn(sums, this.nowMs());
  }

  private heldIn(sums: RollingSum[], now: number): LimiterSnapshot['wallets'][string] | undefined {
    let held: Record<string, Array<[number, string]>> | undefined;
    this.limits.forEach((limit, i) => {
      const entries = sums[i]!.entries(now);
      if (entries.length > 0) (held ??= {})[limit.name] = entries.map(([b, v]) => [b, String(v)]);
    });
    return held;
  }

  /**
   * The wallets remembered, as keys, walked as the map goes: a wallet added meanwhile is met too, one forgotten
   * meanwhile is not (so a caller may walk it a slice at a time between signatures).
   */
  keys(): IterableIterator<string> {
    return this.wallets.keys();
  }

  /**
   * The wallets whose windows changed (a signature recorded or given back, a restore) since the last call, which
   * forgets them; from the first call on (before it, nothing is kept: a limiter nobody saves remembers no set).
   */
  drainChanged(): Set<string> {
    const changed = this.changed ?? new Set<string>();
    this.changed = new Set<string>();
    return changed;
  }

  /** Adds what a snapshot counted (a restart); entries past their window, and limits no longer configured, are dropped. */
  restore(snapshot: LimiterSnapshot): void {
    const now = this.nowMs();
    for (const [key, held] of Object.entries(snapshot.wallets)) {
      const wallet = counterpartyKey(key);
      const sums = this.wallets.get(wallet) ?? this.limits.map((l) => new RollingSum(l.windowSeconds * 1000));
      this.limits.forEach((limit, i) =>
        sums[i]!.restore(
          now,
          (held[limit.name] ?? []).map(([b, v]) => [b, BigInt(v)] as const),
        ),
      );
      if (sums.some((s) => s.heldUntil() > now)) this.wallets.set(wallet, sums);
      this.changed?.add(wallet);
    }
    this.changeCount++;
  }

  /** Grows on every record, give-back and restore: whether there is anything new to save. */
  get changes(): number {
    return this.changeCount;
  }

  /** Wallets currently remembered (for tests and the sweep). */
  get size(): number {
    return this.wallets.size;
  }

  private sweep(now: number): void {
    for (const [key, sums] of this.wallets) if (sums.every((s) => s.heldUntil() <= now)) this.wallets.delete(key);
  }
}
