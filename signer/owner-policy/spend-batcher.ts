/**
 * Group commit for the signer's spend records: payment signatures asked for at once share one transaction in
 * the signer's store (./pg-owner-policy-store.ts), so a busy signer pays a handful of round trips per batch
 * instead of per signature. Each request still resolves only after the transaction holding its spend committed,
 * and a batch that fails fails each of its requests (nothing is signed on a spend that was not committed).
 *
 * When a batch starts: at the end of the event loop's turn in which it could (so the requests of one turn — a frame
 * of several, or several frames read together — share it instead of the first going alone), unless every request
 * waiting is patient. A request is patient while something it waits for anyway is still running (`waitFor`: the
 * signature the HSM makes while its spend commits); the batch then gathers until one of those finishes, an
 * impatient request arrives, `maxBatch` requests wait, or `gatherMs` passed since it could have started. Under
 * load the HSM's queue is what the batch waits on, so batches grow and each signature's share of a commit shrinks;
 * a lone payment's commit starts when its signature is made.
 *
 * Defends: the store's cost per signature under load (one transaction per batch, at most `maxInFlight` batches
 * at a time, at most `maxBatch` requests in one). Does not defend: fairness between wallets beyond arrival order.
 */
interface Waiting<E, O> {
  entry: E;
  resolve: (outcome: O) => void;
  reject: (err: unknown) => void;
  /** Waits for something of its own still running: the batch may gather meanwhile. */
  patient: boolean;
}

export interface BatcherLimits {
  maxInFlight: number;
  maxBatch: number;
  /** How long a batch of patient requests may gather, from when it could have started (ms; 0: never). */
  gatherMs?: number;
}

export class SpendBatcher<E, O> {
  private readonly queue: Array<Waiting<E, O>> = [];
  private inFlight = 0;
  /** A start is scheduled for the end of this turn of the event loop. */
  private starting = false;
  /** Patient requests gathering: the timer that ends it, and whether it did (the timer's word, not a clock's). */
  private gathering: { timer: NodeJS.Timeout; over: boolean } | undefined;

  constructor(
    /** Runs one batch in one transaction; resolves with an outcome per entry, in order. */
    private readonly run: (entries: E[]) => Promise<O[]>,
    private readonly limits: BatcherLimits,
  ) {}

  /** Queues `entry`; resolves with its outcome once its batch ran. */
  submit(entry: E): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ entry, resolve, reject, patient: false });
      this.startAtEndOfTurn();
    });
  }

  /**
   * `entry`, still waiting, is patient until `running` settles: its batch may gather meanwhile. Call in the turn
   * that submitted it (before the turn ends, its batch may already have started: then this does nothing).
   */
  waitFor(entry: E, running: Promise<unknown>): void {
    if (!this.limits.gatherMs) return;
    const waiting = this.queue.find((w) => w.entry === entry);
    if (!waiting) return;
    waiting.patient = true;
    const done = () => {
      waiting.patient = false;
      this.startAtEndOfTurn();
    };
    running.then(done, done);
  }

  private startAtEndOfTurn(): void {
    if (this.starting || this.inFlight >= this.limits.maxInFlight) return;
    this.starting = true;
    setImmediate(() => {
      this.starting = false;
      this.start();
    });
  }

  /**
   * Starts batches (those waiting for one in flight as soon as it ends), unless every waiting request is patient and
   * the gathering may go on.
   */
  private start(): void {
    if (this.inFlight >= this.limits.maxInFlight || this.queue.length === 0) return;
    if (this.mayGather()) return;
    if (this.gathering) clearTimeout(this.gathering.timer);
    this.gathering = undefined;
    this.pump();
  }

  private mayGather(): boolean {
    const gatherMs = this.limits.gatherMs ?? 0;
    if (gatherMs <= 0 || this.queue.length >= this.limits.maxBatch) return false;
    if (!this.queue.every((w) => w.patient)) return false;
    if (!this.gathering) {
      const gathering = {
        over: false,
        timer: setTimeout(() => {
          gathering.over = true;
          this.startAtEndOfTurn();
        }, gatherMs),
      };
      this.gathering = gathering;
      return true;
    }
    return !this.gathering.over;
  }

  private pump(): void {
    while (this.inFlight < this.limits.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.limits.maxBatch);
      this.inFlight++;
      void this.run(batch.map((b) => b.entry))
        .then(
          (outcomes) => batch.forEach((b, i) => b.resolve(outcomes[i]!)),
          (err: unknown) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          this.inFlight--;
          this.start();
        });
    }
  }
}
