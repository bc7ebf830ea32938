/**
 * The store's generation (migration 0010_store_generation): one number in the store, raised by one in the same
 * transaction as every write that binds trust — an account's authority recorded, a wallet recorded or adopted, a
 * signed policy accepted — and the highest of it this process has seen. A store restored from an older snapshot
 * (an insider with backups, an operator's mistake) holds a lower number than the signer saw: at start the
 * watermark file says so (./store-watermark.ts); while running, the next trust-binding write raises it to a number
 * not above the highest seen, and is rolled back and refused as `policy_store_unavailable` (rule
 * `store_rolled_back`), logged, the process left running.
 *
 * Defends: a restored store silently undoing the owner's protections — an older, looser signed policy held again
 * (the version rule only compares with what the store holds now), or an account's authority gone, so that a wallet
 * is recorded with none and bound to whoever signs its first policy (`first_signer`).
 * Does not defend: spends — they do not raise the generation (the payment path stays as fast as it was), so a
 * store restored with no trust-binding write since its snapshot is not seen to be older, and the spends since are
 * forgotten (the windows count less: the signer's own ceilings still hold); a store restored while this process
 * runs is seen only at its next trust-binding write, and only against what this process saw (another process,
 * started on an older generation, may accept one write on it before its own restart refuses the store).
 * The generation row is taken last in each transaction (a policy's: just before its history row, whose insert waits
 * for nothing, so that history rows are numbered in commit order), so a transaction that holds it waits for nothing
 * but its commit: trust-binding writes commit one at a time (they are rare: accounts, wallets, policies).
 */
import type pg from 'pg';
import { SignerFault } from '../signer-error.js';

/** What the store logs: pino's `(fields, message)`. */
export interface StoreLog {
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** Where the highest generation seen is kept beyond this process (./store-watermark.ts). */
export interface GenerationWatermark {
  /** At start, with the store's generation: resolves when the store may be used, throws when it may not. */
  start(storeGeneration: number): Promise<void>;
  /** After a commit that raised the store's generation to `generation`. */
  raised(generation: number): Promise<void>;
}

type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

/** The store's generation now. */
export async function readStoreGeneration(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ generation: string }>('SELECT generation FROM signer_store_generation');
  return Number(rows[0]!.generation);
}

export class StoreGenerations {
  /** The highest generation this process saw committed (or found at start). */
  private highest = 0;

  constructor(private readonly options: { watermark?: GenerationWatermark | undefined; log?: StoreLog | undefined }) {}

  /** At start (the store migrated): checked against the watermark, which throws to refuse the store. */
  async start(storeGeneration: number): Promise<void> {
    await this.options.watermark?.start(storeGeneration);
    this.highest = Math.max(this.highest, storeGeneration);
  }

  /**
   * Raises the store's generation in `client`'s transaction — its last statement before the commit. A number not
   * above the highest this process saw committed means the store went back under it: thrown, so the caller's
   * transaction rolls back and nothing is bound.
   */
  async raise(client: pg.PoolClient): Promise<number> {
    const { rows } = await client.query<{ generation: string }>(
      'UPDATE signer_store_generation SET generation = generation + 1 RETURNING generation',
    );
    const generation = Number(rows[0]!.generation);
    if (generation > this.highest) return generation;
    const fields = { event: 'store_rolled_back', store_generation: generation - 1, seen_generation: this.highest };
    this.options.log?.error(
      fields,
      "store_rolled_back: the signer's policy store is older than this signer has seen (restored from a backup?); trust-binding writes are refused",
    );
    throw new SignerFault(
      'policy_store_unavailable',
      `the signer's policy store is older than this signer has seen (generation ${generation - 1}, seen ${this.highest}): restored from a backup? Nothing was recorded`,
      { rule: 'store_rolled_back' },
    );
  }

  /** After the commit of a transaction that raised the generation: remembered, and told to the watermark. */
  async committed(generation: number): Promise<void> {
    if (generation > this.highest) this.highest = generation;
    try {
      await this.options.watermark?.raised(generation);
    } catch (err) {
      // The write is committed; the file catches up at the next raise (or at the next start).
      this.options.log?.error(
        { event: 'store_watermark_unwritten', generation, err: err instanceof Error ? err.message : String(err) },
        "the policy store's watermark file was not written",
      );
    }
  }
}
