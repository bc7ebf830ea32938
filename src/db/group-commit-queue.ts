/**
 * Group commit for one kind of statement: an item is sent at once when no statement is running, otherwise it
 * joins the next one (at most `maxBatch` items). An idle service pays no added latency; a busy one sends one
 * statement for many items. Used by the pay path's decision writes and signature records.
 *
 * `run` sends one batch and must not reject: it returns how to tell the batch's callers. The queue is idle
 * again before they hear back, so an item handed over in reaction is sent at once, not after a wait.
 */
export class GroupCommitQueue<I> {
  private queue: I[] = [];
  private inFlight = false;

  constructor(
    private readonly run: (batch: I[]) => Promise<() => void>,
    private readonly options: { maxBatch?: number; onBatch?: (size: number) => void } = {},
  ) {}

  push(item: I): void {
    this.queue.push(item);
    this.pump();
  }

  /** Takes every item still waiting for a statement out of the queue. */
  takeQueued(): I[] {
    return this.queue.splice(0);
  }

  private pump(): void {
    if (this.inFlight || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.options.maxBatch ?? 256);
    this.inFlight = true;
    this.options.onBatch?.(batch.length);
    void this.send(batch);
  }

  private async send(batch: I[]): Promise<void> {
    const settle = await this.run(batch);
    this.inFlight = false;
    settle();
    this.pump();
  }
}
