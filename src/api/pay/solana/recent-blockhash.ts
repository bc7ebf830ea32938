/**
 * The blockhash a Solana payment's message is built on, read from the deployment's RPC
 * (TREASURY_SOLANA_RPC_URL) and reused for at most `maxAgeMs` (TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS): payments
 * built meanwhile take the same one, and payments asking while a read is under way share that read. A
 * blockhash lets a transaction land for about 150 slots (a minute or more) after its block, so a reuse of a
 * second or two costs a message that much of its lifetime and saves a round trip to the RPC for every payment
 * but one in that time (docs/performance.md, "Solana payments without an RPC round trip").
 *
 * Defends: the RPC's load and the payment's latency (one read per `maxAgeMs`, not one per payment); a slow RPC
 * holding payments (each read is aborted after the RPC timeout, and a failed read is not kept: the next payment
 * reads again). Does not defend: a lying RPC (a wrong blockhash only makes the transaction fail to land), nor
 * two identical payments in one window (same wallet, payee, amount and seller memo give the same message;
 * the second is refused as `nonce_already_used`, as it was within one slot before).
 */
import { createSolanaRpc } from '@solana/kit';

export interface Blockhash {
  blockhash: string;
  /** The last block height at which a transaction on this blockhash can land, as the RPC answered it (decimal). */
  lastValidBlockHeight: string;
}

export interface RecentBlockhashOptions {
  url: string;
  timeoutMs: number;
  /** How long a blockhash read is reused (ms; 0: every payment reads its own). */
  maxAgeMs: number;
  /** The clock (ms since the epoch; tests may pass their own). */
  now?: () => number;
  /** Told where each blockhash asked for came from (the metric `treasury_solana_blockhashes_total`). */
  count?: (source: BlockhashSource) => void;
}

/**
 * Where a payment's blockhash came from: `read` (this payment's read of the RPC), `shared` (a read under way for
 * another payment), `reused` (read less than `maxAgeMs` ago), `failed` (the read it waited for failed).
 */
export type BlockhashSource = 'read' | 'shared' | 'reused' | 'failed';

export class RecentBlockhash {
  private readonly rpc: ReturnType<typeof createSolanaRpc>;
  private readonly now: () => number;
  private kept: { value: Blockhash; readAt: number } | undefined;
  private reading: Promise<Blockhash> | undefined;

  constructor(private readonly options: RecentBlockhashOptions) {
    this.rpc = createSolanaRpc(options.url);
    this.now = options.now ?? Date.now;
  }

  /** A blockhash read at most `maxAgeMs` ago, or a new read (shared with every caller that asks during it). */
  async get(): Promise<Blockhash> {
    const count = this.options.count ?? (() => undefined);
    const kept = this.kept;
    if (kept && this.now() - kept.readAt < this.options.maxAgeMs) {
      count('reused');
      return kept.value;
    }
    const shared = this.reading !== undefined;
    this.reading ??= this.read().finally(() => {
      this.reading = undefined;
    });
    try {
      const value = await this.reading;
      count(shared ? 'shared' : 'read');
      return value;
    } catch (err) {
      count('failed');
      throw err;
    }
  }

  private async read(): Promise<Blockhash> {
    const startedAt = this.now();
    const { value } = await this.rpc
      .getLatestBlockhash()
      .send({ abortSignal: AbortSignal.timeout(this.options.timeoutMs) });
    const read = { blockhash: value.blockhash, lastValidBlockHeight: value.lastValidBlockHeight.toString() };
    // Its age counts from when the read began: the RPC answered with the newest blockhash it had then.
    if (this.options.maxAgeMs > 0) this.kept = { value: read, readAt: startedAt };
    return read;
  }
}
