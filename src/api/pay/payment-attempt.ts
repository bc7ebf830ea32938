/**
 * One attempt at deciding a payment (./reserve-payment.ts takes up to 20): who pays, what, the wallet's
 * lock key, whether this process may decide it on remembered state, and the attempt's clock — read again
 * each time a snapshot is taken, so that a payment that waited for its wallet's turn decides at the time
 * it was decided on. Its steps — take the remembered snapshot or read one, decide on it (./decide-payment.ts),
 * remember what the write will leave, write a decision alone — are what the three ways of reserving
 * (./reserve-in-group-commit.ts, ./reserve-alone.ts, ./reserve-under-pat-lock.ts) are made of.
 */
import { AppError } from '../errors/app-error.js';
import { walletLockKey } from '../db/wallet-transaction.js';
import { decidePayment } from './decide-payment.js';
import type { PayDeps } from './pay-deps.js';
import { checkedSnapshot, snapshotAfter, snapshotWithWindow, type PaySnapshot } from './pay-snapshot.js';
import { velocityWindowReadOn } from '../../../policy/velocity-window.js';
import type { CallContext, CappedPat, Decided, DecisionOutcome, SnapshotChange, SpendPlan } from './pay-types.js';
import { paymentTerms } from './payment-authorization.js';

export class PaymentAttempt {
  /** When the payment is decided: the clock read when its snapshot was taken. */
  now: Date;
  readonly lockKey: string;
  /**
   * A buyer PAT whose bearer came with a daily cap: decided on its remembered total while that leaves room, or
   * under its lock (./reserve-payment.ts); the cap that binds is the one committed (../snapshot-cache.ts).
   */
  readonly cappedPat: CappedPat | undefined;
  /**
   * Whether the payment may decide on a remembered snapshot and be remembered: without an Idempotency-Key,
   * or at the key's first use in this process (marked as seen here).
   */
  readonly cacheable: boolean;

  constructor(
    private readonly deps: PayDeps,
    readonly ctx: CallContext,
    readonly plan: SpendPlan,
    readonly requestHash: string | null,
  ) {
    this.now = deps.clock();
    this.lockKey = walletLockKey(ctx.walletId).toString();
    // Without a cap (as `xx init` mints the agent's PAT) the write only adds to the PAT's total, which one statement does atomically.
    this.cappedPat =
      ctx.pat && ctx.pat.dailyCapMicro !== null
        ? { tokenId: ctx.pat.tokenId, dailyCapMicro: ctx.pat.dailyCapMicro }
        : undefined;
    this.cacheable = ctx.idempotencyKey === undefined || deps.memory.firstUseOfKey(ctx.walletId, ctx.idempotencyKey);
  }

  /** The wallet's snapshot as this process remembers it, at a fresh clock reading, if it may be used. */
  remembered(): PaySnapshot | undefined {
    if (!this.cacheable) return undefined;
    this.now = this.deps.clock();
    const snapshot = this.deps.memory.snapshot(
      this.ctx.walletId,
      this.deps.writes.generationOf(this.lockKey),
      this.now,
    );
    if (snapshot) this.deps.metrics.paySnapshots.inc({ source: 'remembered' });
    return snapshot;
  }

  /**
   * Once the wallet's writes settled: its remembered snapshot with the velocity window read on (one short
   * statement, policy/velocity-window.ts) when every payment time it knew has left the window, at a fresh clock
   * reading; undefined when that is not all it lacks, when the wallet changed meanwhile, or when what was found
   * cannot agree with the count (the wallet is then read in full).
   */
  async readOn(): Promise<PaySnapshot | undefined> {
    if (!this.cacheable) return undefined;
    const { deps, ctx } = this;
    const now = deps.clock();
    const generation = deps.writes.generationOf(this.lockKey);
    const pending = deps.memory.toReadOn(ctx.walletId, generation, now);
    if (!pending) return undefined;
    const forgets = deps.memory.forgetCount;
    const found = await deps.snapshots.readVelocityOn(ctx.walletId, now, pending.windowSeconds, pending.point);
    if (deps.memory.forgetCount !== forgets || deps.writes.generationOf(this.lockKey) !== generation) return undefined;
    const recent = velocityWindowReadOn(pending.point, found);
    if (!recent) return undefined;
    deps.metrics.paySnapshots.inc({ source: 'velocity_read_on' });
    this.now = now;
    return snapshotWithWindow(pending.snapshot, recent);
  }

  /** Reads the wallet's snapshot (one prepared statement), at a fresh clock reading. */
  read(): Promise<PaySnapshot | undefined> {
    this.deps.metrics.paySnapshots.inc({ source: 'read' });
    this.now = this.deps.clock();
    return this.deps.snapshots.read(this.ctx.walletId, this.now, this.ctx.idempotencyKey, 'pay');
  }

  /** `snapshot` if it is the caller's active wallet: 404 / 410 otherwise (before anything else is checked). */
  checked(snapshot: PaySnapshot | undefined): PaySnapshot {
    return checkedSnapshot(snapshot, this.ctx.accountId, this.ctx.walletId);
  }

  /** Everything but the write, on a checked snapshot: the outcome, the write that records it, and what the snapshot becomes. */
  decide(snapshot: PaySnapshot): Decided {
    const { deps, ctx } = this;
    return decidePayment({
      snapshot,
      plan: this.plan,
      payer: ctx,
      requestHash: this.requestHash,
      lockKey: this.lockKey,
      chains: deps.chains,
      now: this.now,
      mint: deps.mint,
    });
  }

  /**
   * Once this request's write is decided: what the wallet's next payment may decide on. A payment that may not
   * be remembered (a key seen before) forgets instead: its write moved the wallet's chain past what is remembered.
   */
  remember(snapshot: PaySnapshot, change: SnapshotChange): void {
    if (!this.cacheable) {
      this.deps.memory.forgetSnapshot(this.ctx.walletId);
      return;
    }
    this.deps.memory.rememberSnapshot(
      this.ctx.walletId,
      snapshotAfter(snapshot, change),
      change.at,
      this.deps.writes.generationOf(this.lockKey),
    );
  }

  /** Whether the remembered total of the capped PAT this UTC day leaves room for this payment. */
  patRoom(pat: CappedPat): boolean {
    return this.deps.memory.patRoom(pat, this.plan.amountMicro, this.now, this.deps.writes.generation);
  }
}

/** A nonce already used by the wallet (UNIQUE per sender and scheme) answers 409 `nonce_already_used`; anything else as it is. */
export function nonceUsedError(err: unknown, outcome: DecisionOutcome | undefined): unknown {
  const pgErr = err as { code?: string; constraint?: string };
  if (pgErr.code === '23505' && pgErr.constraint?.includes('nonce') && outcome?.kind === 'reserved') {
    return new AppError('nonce_already_used', { fields: { nonce: paymentTerms(outcome.payment).nonce } });
  }
  return err;
}
