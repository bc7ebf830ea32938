/**
 * A validator's recent-blockhash window and status cache, for the offline chain: a transaction is valid only
 * while its blockhash is one of the last MAX_RECENT_BLOCKHASHES (one per slot), and a signature that landed
 * under a blockhash still in the window is refused again as AlreadyProcessed. Once the blockhash leaves the
 * window, the transaction is refused as BlockhashNotFound, so its signature can be forgotten.
 * Defends against: a replayed transaction landing twice. litesvm alone does not: its latest blockhash
 * never changes unless told to, and its own history is bounded, so an old transaction would land again
 * after enough others.
 * Does not: accept durable-nonce transactions (their lifetime is a nonce, not a recent blockhash).
 */
export const MAX_RECENT_BLOCKHASHES = 150;

export class RecentBlockhashes {
  /** Oldest first; the last one is the latest. */
  private readonly window: Array<{ blockhash: string; signatures: Set<string> }> = [];

  constructor(latest: string) {
    this.push(latest);
  }

  isRecent(blockhash: string): boolean {
    return this.window.some((entry) => entry.blockhash === blockhash);
  }

  hasLanded(signature: string): boolean {
    return this.window.some((entry) => entry.signatures.has(signature));
  }

  /** Remembers `signature` as landed under `blockhash` (which must be recent). */
  record(blockhash: string, signature: string): void {
    const entry = this.window.find((one) => one.blockhash === blockhash);
    if (!entry) throw new Error('a transaction landed under a blockhash outside the window');
    entry.signatures.add(signature);
  }

  /** A new slot's blockhash; the oldest leaves the window with its signatures. */
  push(blockhash: string): void {
    this.window.push({ blockhash, signatures: new Set() });
    if (this.window.length > MAX_RECENT_BLOCKHASHES) this.window.shift();
  }
}
