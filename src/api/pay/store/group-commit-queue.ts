/**
 * Group commit for one kind of statement: an item is sent at once when no statement is running, otherwise it
 * joins the next one (at most `maxBatch` items). An idle service pays no added latency; a busy one sends one
 * statement for many items. Used by the pay path's decision writes and signature records.
 *
 * An item may take its place in the queue before it can be sent (`isReady` false: the pay path keeps a
 * decision's place while its signature is made). It is sent once ready and `nudge` is called; until then it
 * holds back every later item with the same `orderKey` (a wallet's writes stay in the order they were
 * decided), not the others.
 *
 * `run` sends one batch and must not reject: it returns how to tell the batch's callers. The queue is idle
 * again before they hear back, so an item handed over in reaction is sent at once, not after a wait.
 */
export class GroupCommitQueue<I> {
  private queue: I[] = [];
  private inFlight = false;

  constructor(
    private readonly run: (batch: I[]) => Promise<() => void>,
    private readonly options: {
      maxBatch?: number;
      onBatch?: (size: number) => void;
      isReady?: (item: I) => boolean;
      orderKey?: (item: I) => string;
    } = {},
  ) {}

  push(item: I): void {
    this.queue.push(item);
    this.pump();
  }

  /** An item already queued became ready: send it now if no statement is running. */
  nudge(): void {
    this.pump();
  }

  /** Takes every item still waiting for a statement out of the queue, ready or not (those `which` picks, if given). */
  takeQueued(which?: (item: I) => boolean): I[] {
    if (!which) return this.queue.splice(0);
    const taken: I[] = [];
    const kept: I[] = [];
    for (const item of this.queue) (which(item) ? taken : kept).push(item);
    this.queue = kept;
    return taken;
  }

  private pump(): void {
    if (this.inFlight || this.queue.length === 0) return;
    const batch = this.takeBatch();
    if (batch.length === 0) return;
    this.inFlight = true;
    this.options.onBatch?.(batch.length);
    void this.send(batch);
  }

  /** The ready items, in queue order, that no earlier unready item of the same order key holds back. */
  private takeBatch(): I[] {
    const max = this.options.maxBatch ?? 256;
    const { isReady, orderKey } = this.options;
    if (!isReady) return this.queue.splice(0, max);
    const batch: I[] = [];
    const kept: I[] = [];
    const held = new Set<string>();
    for (const item of this.queue) {
      const key = orderKey?.(item);
      const blocked = key === undefined ? false : held.has(key);
      if (batch.length < max && !blocked && isReady(item)) {
        batch.push(item);
        continue;
      }
      if (key !== undefined && !isReady(item)) held.add(key);
      kept.push(item);
    }
    this.queue = kept;
    return batch;
  }

  private async send(batch: I[]): Promise<void> {
    const settle = await this.run(batch);
    this.inFlight = false;
    settle();
    this.pump();
  }
}
