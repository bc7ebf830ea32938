/**
 * Group commit for the signer's spend records: payment signatures asked for at once share one transaction in
 * the signer's store (./pg-owner-policy-store.ts), so a busy signer pays a handful of round trips per batch
 * instead of per signature. Each request still resolves only after the transaction holding its spend committed,
 * and a batch that fails fails each of its requests (nothing is signed on a spend that was not committed).
 * A batch that could start at once starts at the end of the event loop's turn, so the requests of one turn
 * (a frame of several, or several frames read together) share it instead of the first going alone; requests
 * that waited for a batch in flight start as soon as it ends.
 *
 * Defends: the store's cost per signature under load (one transaction per batch, at most `maxInFlight` batches
 * at a time, at most `maxBatch` requests in one). Does not defend: fairness between wallets beyond arrival order.
 */
export class SpendBatcher<E, O> {
  private readonly queue: Array<{ entry: E; resolve: (outcome: O) => void; reject: (err: unknown) => void }> = [];
  private inFlight = 0;
  /** A start is scheduled for the end of this turn of the event loop. */
  private starting = false;

  constructor(
    /** Runs one batch in one transaction; resolves with an outcome per entry, in order. */
    private readonly run: (entries: E[]) => Promise<O[]>,
    private readonly limits: { maxInFlight: number; maxBatch: number },
  ) {}

  submit(entry: E): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
      this.startAtEndOfTurn();
    });
  }

  private startAtEndOfTurn(): void {
    if (this.starting || this.inFlight >= this.limits.maxInFlight) return;
    this.starting = true;
    setImmediate(() => {
      this.starting = false;
      this.pump();
    });
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
          this.pump();
        });
    }
  }
}
