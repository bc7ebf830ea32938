/**
 * Turns per wallet inside one signer process: a batch that decides spends of wallets with a signed policy waits
 * for the batches before it that hold any of the same wallets, as their row locks would make it wait in the
 * store. So a busy wallet's batches do not decide on the same snapshot only to have all but one refused at
 * commit (./spend-statements.ts `commitDecidedSpends`) and decided again.
 *
 * Defends: wasted round trips on a hot wallet within one process. Does not defend: correctness — other signer
 * processes sharing the store are ordered by the store itself. No deadlock: a batch claims all its wallets at
 * once, synchronously, and waits only for batches that claimed before it.
 */
export class WalletTurns {
  private readonly last = new Map<string, Promise<void>>();

  /** Waits for the earlier holders of any of `addresses`; resolves with the function that ends this turn. */
  async claim(addresses: readonly string[]): Promise<() => void> {
    let end!: () => void;
    const mine = new Promise<void>((resolve) => (end = resolve));
    const before = addresses.flatMap((a) => {
      const previous = this.last.get(a);
      this.last.set(a, mine);
      return previous ? [previous] : [];
    });
    if (before.length > 0) await Promise.all(before);
    return () => {
      for (const a of addresses) if (this.last.get(a) === mine) this.last.delete(a);
      end();
    };
  }
}
