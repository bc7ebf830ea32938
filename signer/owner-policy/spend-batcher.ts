/**
 * Group commit for the signer's spend records: payment signatures asked for at once share one transaction in
 * the signer's store (./pg-owner-policy-store.ts), so a busy signer pays a handful of round trips per batch
 * instead of per signature. Each request still resolves only after the transaction holding its spend committed,
 * and a batch that fails fails each of its requests (nothing is signed on a spend that was not committed).
 *
 * Defends: the store's cost per signature under load (one transaction per batch, at most `maxInFlight` batches
 * at a time, at most `maxBatch` requests in one). Does not defend: fairness between wallets beyond arrival order.
 */
export class SpendBatcher<E, O> {
  private readonly queue: Array<{ entry: E; resolve: (outcome: O) => void; reject: (err: unknown) => void }> = [];
  private inFlight = 0;

  constructor(
    /** Runs one batch in one transaction; resolves with an outcome per entry, in order. */
    private readonly run: (entries: E[]) => Promise<O[]>,
    private readonly limits: { maxInFlight: number; maxBatch: number },
  ) {}

  submit(entry: E): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
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
