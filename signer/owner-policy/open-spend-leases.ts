/**
 * Spends of wallets without a signed policy, recorded after their signature leaves (docs/adr/0012, "Wallets
 * without a signed policy: recorded after release"). Such a spend is decided by nothing in the signer (only its
 * ceilings); it is kept so that a policy signed later counts it. A wallet may take this path only while this
 * process holds a *lease* on it: the proof, younger than `leaseMs`, that the store saw the wallet's row without
 * a policy — taken from the moment a statement that recorded its spends with that check was sent (or its
 * oldest spend's instant plus `rowAgeMs`, if earlier). Without a lease the spend is recorded before release, as before, and that
 * statement renews the lease.
 *
 * The queued spends are written in batches (`flushDelayMs` after the first, one batch in flight): a wallet the
 * store still shows without a policy has them recorded and its lease renewed; a wallet that gained one meanwhile
 * (through another signer process) has them recorded all the same, raising its spend counter so that no decision
 * made without them commits, and loses its lease. A failed batch is kept and tried again, and no lease is
 * renewed meanwhile: after `leaseMs` every spend is back on the path that records before release (and fails
 * closed if the store is down).
 *
 * Besides its own leases, a process keeps every wallet a statement saw without a policy (after its last read of
 * the policy changes was answered) *known open*, and reads the policies accepted since (`changedSince`) every
 * third of a lease: a known-open wallet holds a lease from that read's sending, unless the read named it. The read
 * follows the policies' commits: each history row is numbered under the store generation's lock, held until its
 * commit (./pg-owner-policy-store.ts `storePolicy`), so the newest number a read returns has no uncommitted policy
 * below it. A wallet this process read with a policy (`hasPolicy`) is never given a lease or known open again.
 *
 * Defends: a policy's first decisions missing the spends released before it — `suspend` (set_wallet_policy in
 * this process) drops the wallet's leases and writes the queue before the policy is stored; another process's
 * leases began before the commit and have run out when set_wallet_policy answers (it waits one lease:
 * ./pg-owner-policy-store.ts); a policy committed after a later-numbered one, which a read passed in between (the
 * numbering above). Does not defend: spends queued when the process dies (lost: the last
 * `flushDelayMs` and the write in flight, within the signer's own ceilings, only of wallets that have no signed
 * policy).
 */
import type { OpenOutcome, SpendRow } from './spend-statements.js';

/** Wallets known open, at most (past it the set starts over: a wallet it forgets costs one statement). */
const MAX_KNOWN = 100_000;

export interface OpenSpendLeasesOptions {
  /** Records rows of wallets whose row still has no policy (spend-statements.ts `recordOpenSpends`). */
  recordOpen: (rows: SpendRow[]) => Promise<Map<string, OpenOutcome>>;
  /** Records rows whatever the wallet's policy, raising its spend counter (`insertLockedSpends`). */
  recordAnyway: (rows: SpendRow[]) => Promise<void>;
  leaseMs: number;
  /** A lease runs from the statement that saw the row, or from its oldest spend's instant plus this much if earlier. */
  rowAgeMs: number;
  flushDelayMs: number;
  /**
   * The wallets whose policy was accepted after policy number `since` (spend-statements.ts `policyChangesSince`):
   * read every third of a lease while wallets are known open, it keeps every known wallet's lease fresh at once.
   */
  changedSince?: (since: string) => Promise<{ seq: string; addresses: string[] }>;
  /** Monotonic milliseconds (tests move it). */
  now?: () => number;
  /** Told of a batch that failed (kept and tried again). */
  failed?: (err: unknown) => void;
}

export class OpenSpendLeases {
  /** Wallet → when its lease began (monotonic ms). */
  private readonly leases = new Map<string, number>();
  private readonly suspended = new Map<string, number>();
  private queued: SpendRow[] = [];
  private inFlight: { refs: Set<string>; done: Promise<void> } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => number;
  /** Wallets a statement saw without a policy after the last read of the policy changes was answered. */
  private readonly known = new Set<string>();
  /** Wallets this process read with a signed policy (at most MAX_KNOWN: past it the set starts over). */
  private readonly withPolicy = new Set<string>();
  /** The newest policy number read, when the last read was sent and when it was answered (monotonic ms). */
  private changes: { seq: string; sentAt: number; answeredAt: number } | null = null;
  private watch: NodeJS.Timeout | null = null;
  private reading = false;

  constructor(private readonly options: OpenSpendLeasesOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Starts reading policy changes after policy number `seq` (read before any statement gave a lease). */
  watchChanges(seq: string): void {
    if (!this.options.changedSince || this.watch) return;
    const now = this.now();
    this.changes = { seq, sentAt: -Infinity, answeredAt: now };
    this.watch = setInterval(() => void this.readChanges().catch(() => undefined), this.options.leaseMs / 3);
    this.watch.unref();
  }

  /** Whether `address`'s spend may be recorded after release now. */
  holds(address: string): boolean {
    if (this.known.has(address) && this.now() - (this.changes?.sentAt ?? -Infinity) < this.options.leaseMs) return true;
    const since = this.leases.get(address);
    if (since === undefined) return false;
    if (this.now() - since < this.options.leaseMs) return true;
    this.leases.delete(address);
    return false;
  }

  /** One read of the wallets whose policy changed: they are known open no more; every other known lease is fresh. */
  private async readChanges(): Promise<void> {
    if (!this.changes || this.known.size === 0 || this.reading) return;
    this.reading = true;
    try {
      const sentAt = this.now();
      const read = await this.options.changedSince!(this.changes.seq);
      for (const address of read.addresses) this.drop(address);
      this.changes = { seq: read.seq, sentAt, answeredAt: this.now() };
    } finally {
      this.reading = false;
    }
  }

  /** A statement that checked the row (sent at `sentAt`, monotonic) recorded `address`'s spends as open. */
  renew(address: string, sentAt: number, rows: readonly SpendRow[] = []): void {
    // A statement sent before the policy this process has seen since: its word is stale.
    if (this.suspended.has(address) || this.withPolicy.has(address)) return;
    // The lease runs from the statement, or earlier if one of its rows is older than `rowAgeMs` (this clock).
    const skew = Date.now() - this.now();
    const age = this.options.rowAgeMs;
    const oldest = rows.reduce((t, r) => (r[1] === address ? Math.min(t, r[4].getTime() - skew + age) : t), sentAt);
    if (this.now() - oldest < this.options.leaseMs) this.leases.set(address, oldest);
    // Known open only if the statement left after the last read of policy changes was answered: an older one
    // may have seen the row before a policy that read reported.
    if (this.changes && sentAt >= this.changes.answeredAt) {
      if (this.known.size >= MAX_KNOWN) this.known.clear();
      this.known.add(address);
    }
  }

  drop(address: string): void {
    this.leases.delete(address);
    this.known.delete(address);
  }

  /**
   * This process read `address` with a signed policy: no lease, and never known open again (a policy is never
   * removed) — even if its policy cache forgets the wallet, or a read of the changes missed its policy.
   */
  hasPolicy(address: string): void {
    this.drop(address);
    if (this.withPolicy.size >= MAX_KNOWN) this.withPolicy.clear();
    this.withPolicy.add(address);
  }

  /** Queues a spend of a wallet this process holds a lease on (`holds` said so, in the same turn). */
  enqueue(row: SpendRow): void {
    this.queued.push(row);
    this.timer ??= setTimeout(() => {
      this.timer = null;
      // A failed write keeps its rows and schedules its own retry (flush): its rejection is not a crash.
      void this.flush().catch(() => undefined);
    }, this.options.flushDelayMs);
  }

  /** Takes a queued spend back (its signature did not leave): true if it was still queued or is being written. */
  async giveBack(ref: string): Promise<boolean> {
    const index = this.queued.findIndex((r) => r[0] === ref);
    if (index >= 0) {
      this.queued.splice(index, 1);
      return true;
    }
    // Being written: wait for it, then the caller deletes the row as any other.
    if (this.inFlight?.refs.has(ref)) await this.inFlight.done;
    return false;
  }

  /** While `address`'s policy is being set: no lease is given or renewed (nested calls count). */
  suspend(address: string): () => void {
    this.suspended.set(address, (this.suspended.get(address) ?? 0) + 1);
    this.drop(address);
    return () => {
      const n = (this.suspended.get(address) ?? 1) - 1;
      if (n > 0) this.suspended.set(address, n);
      else this.suspended.delete(address);
    };
  }

  /** Writes everything queued so far (after the batch in flight); rejects if the store refused it. */
  async flush(): Promise<void> {
    while (this.inFlight) await this.inFlight.done.catch(() => undefined);
    if (this.queued.length === 0) return;
    const rows = this.queued;
    this.queued = [];
    let unwritten = rows;
    const done = this.write(rows, (left) => (unwritten = left));
    this.inFlight = { refs: new Set(rows.map((r) => r[0])), done };
    try {
      await done;
    } catch (err) {
      // Kept for the next try, ahead of what came since; leases are not renewed meanwhile.
      this.queued = [...unwritten, ...this.queued];
      this.options.failed?.(err);
      this.timer ??= setTimeout(() => {
        this.timer = null;
        void this.flush().catch(() => undefined);
      }, 100);
      throw err;
    } finally {
      this.inFlight = null;
    }
  }

  /** Writes `rows`; `left` is told what a failure leaves unwritten (the late rows, once the first statement committed). */
  private async write(rows: SpendRow[], left: (rows: SpendRow[]) => void): Promise<void> {
    const sentAt = this.now();
    const outcomes = await this.options.recordOpen(rows);
    const late = rows.filter((r) => outcomes.get(r[1]) === 'has_policy');
    left(late);
    for (const [address, outcome] of outcomes) {
      if (outcome === 'recorded') this.renew(address, sentAt, rows);
      else this.drop(address);
    }
    if (late.length > 0) await this.options.recordAnyway(late);
  }

  /** Stops the timer; what is still queued is written by `flush`. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.watch) clearInterval(this.watch);
    this.timer = null;
    this.watch = null;
  }
}
