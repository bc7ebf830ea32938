/**
 * Work that holds a pooled connection (an open transaction) while it asks the pool for another, run a few at a
 * time: the rest wait in memory, holding nothing.
 *
 * Defends: the pool's deadlock. When every pooled connection is held by such work, each waiting for a second
 * one, none gets it until the pool's acquire timeout (60 s), and every request of every tenant that needs the
 * pool waits with them — thirty first collection wallets asked for at once by one tenant did that
 * (../sellers/payouts/platform-wallets.ts). With at most `turns` of them at once, they hold at most
 * 2 × `turns` connections, whatever the number asked for.
 * Does not defend: work that asks for more than one further connection at a time, or such work started
 * without this limit; other processes (each has its own pool and its own limit).
 */
export class NestedAcquireLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly turns: number) {
    if (!Number.isInteger(turns) || turns < 1) throw new RangeError('turns must be a positive integer');
  }

  /** Runs `work` once fewer than `turns` others run; a finished one hands its turn to the oldest waiting. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.turns) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
