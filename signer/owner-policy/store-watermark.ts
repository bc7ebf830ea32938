/**
 * The highest generation of the policy store (./store-generation.ts) this signer has seen, kept outside the store in
 * a small file on the signer's own host (TREASURY_SIGNER_STORE_WATERMARK_FILE; by default `store-watermark.json`
 * beside TREASURY_SIGNER_LIMITS_STATE_FILE), so that a store restored from an older snapshot is refused at start:
 *   - no file: created with the store's generation (the first start);
 *   - the store at or above the file: the store is used and the file raised to it (another signer process sharing
 *     the store advanced it);
 *   - the store below the file: the signer refuses to start (`store_rolled_back`, naming both numbers), unless
 *     TREASURY_SIGNER_ACCEPT_STORE_GENERATION names the store's exact generation — an acknowledgement of that one
 *     store, used once: the file is rewritten to it, a warning logged, and the same number does not accept a
 *     second restore to it (the file remembers it).
 * While running, the file is raised after each commit that raised the store's generation (one write at a time,
 * never lowered): a temporary file created exclusively (`wx`, 0600: a file or symlink planted at its path is
 * refused, never followed), written, fsynced and renamed over the old one.
 *
 * Defends: a store restored from an older backup, or a different store, served as if it were current.
 * Does not defend: someone who can write the signer's directory (they can remove or lower the file: they can read the
 * PIN too); a store restored with no trust-binding write since its snapshot (./store-generation.ts); the file of a
 * crash between a commit and its write lags one generation. One file per signer process: processes sharing a store
 * each keep their own (a file shared by two may be lowered by the slower).
 */
import fsp from 'node:fs/promises';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { BaseError } from '../../base/base-error.js';
import type { GenerationWatermark, StoreLog } from './store-generation.js';

const generationSchema = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const watermarkSchema = z
  .object({ v: z.literal(1), generation: generationSchema, accepted: generationSchema.optional() })
  .strict();
type Watermark = z.infer<typeof watermarkSchema>;

/**
 * Why the store or the file cannot be used at start: `store_rolled_back` (the store is older than the file), or the
 * file `unreadable`, `not_a_watermark_file`, `unwritable`.
 */
export type StoreWatermarkErrorCode = 'store_rolled_back' | 'unreadable' | 'not_a_watermark_file' | 'unwritable';

export interface StoreWatermarkErrorDetails {
  file: string;
  store_generation?: number;
  seen_generation?: number;
}

export class StoreWatermarkError extends BaseError<StoreWatermarkErrorCode, StoreWatermarkErrorDetails> {
  override readonly name = 'StoreWatermarkError';
  constructor(
    code: StoreWatermarkErrorCode,
    details: StoreWatermarkErrorDetails,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(code, { message, details, cause: options.cause });
  }
}

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code ?? 'error';

/** The file's watermark, or undefined when there is no file; a file that is not one is refused. */
export function readStoreWatermark(file: string): Watermark | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw new StoreWatermarkError(
      'unreadable',
      { file },
      `cannot read TREASURY_SIGNER_STORE_WATERMARK_FILE ${file} (${errno(err)})`,
    );
  }
  let parsed;
  try {
    parsed = watermarkSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (!parsed?.success)
    throw new StoreWatermarkError(
      'not_a_watermark_file',
      { file },
      `TREASURY_SIGNER_STORE_WATERMARK_FILE ${file} is not a signer store watermark file`,
    );
  return parsed.data;
}

/** Writes `watermark` atomically: a temporary file created exclusively (0600), fsynced, renamed over the old one. */
export async function writeStoreWatermark(file: string, watermark: Watermark): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  // A leftover of a crash (or anything planted there) goes; `wx` then refuses whatever appears meanwhile.
  await fsp.rm(tmp, { force: true });
  const handle = await fsp.open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(JSON.stringify(watermark) + '\n');
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
  await handle.close();
  await fsp.rename(tmp, file);
  // The rename itself, durable (best effort: not every file system lets a directory be fsynced).
  const dir = await fsp.open(path.dirname(file), 'r').catch(() => undefined);
  await dir?.sync().catch(() => undefined);
  await dir?.close().catch(() => undefined);
}

export interface StoreWatermarkOptions {
  file: string;
  /** TREASURY_SIGNER_ACCEPT_STORE_GENERATION: the one store generation below the file that may be used, once. */
  acceptGeneration: number | undefined;
  log?: StoreLog | undefined;
}

export class StoreWatermark implements GenerationWatermark {
  /** What the file holds (as this process last wrote or read it). */
  private held: Watermark = { v: 1, generation: 0 };
  private writes: Promise<void> = Promise.resolve();

  constructor(private readonly options: StoreWatermarkOptions) {}

  async start(storeGeneration: number): Promise<void> {
    const { file, acceptGeneration, log } = this.options;
    const held = readStoreWatermark(file);
    if (held && storeGeneration < held.generation) {
      if (acceptGeneration !== storeGeneration || held.accepted === storeGeneration)
        throw rolledBack(file, storeGeneration, held, acceptGeneration);
      log?.warn(
        {
          event: 'store_generation_accepted',
          store_generation: storeGeneration,
          seen_generation: held.generation,
          file,
        },
        `TREASURY_SIGNER_ACCEPT_STORE_GENERATION=${storeGeneration}: starting on a policy store older than this signer has seen (generation ${storeGeneration}, seen ${held.generation}); what was recorded since is not in it`,
      );
      await this.startWrite({ v: 1, generation: storeGeneration, accepted: storeGeneration });
      return;
    }
    if (held && acceptGeneration !== undefined)
      log?.warn(
        { store_generation: storeGeneration, seen_generation: held.generation },
        'TREASURY_SIGNER_ACCEPT_STORE_GENERATION is set but the policy store is not older than this signer has seen: remove it',
      );
    if (held && storeGeneration === held.generation) {
      this.held = held;
      return;
    }
    await this.startWrite({ ...held, v: 1, generation: storeGeneration });
  }

  raised(generation: number): Promise<void> {
    const write = this.writes.then(async () => {
      if (generation <= this.held.generation) return;
      const next = { ...this.held, generation };
      await writeStoreWatermark(this.options.file, next);
      this.held = next;
    });
    this.writes = write.catch(() => undefined);
    return write;
  }

  /** At start: a file that cannot be written stops the signer before it serves. */
  private async startWrite(watermark: Watermark): Promise<void> {
    try {
      await writeStoreWatermark(this.options.file, watermark);
    } catch (err) {
      throw new StoreWatermarkError(
        'unwritable',
        { file: this.options.file },
        `cannot write TREASURY_SIGNER_STORE_WATERMARK_FILE ${this.options.file} (${errno(err)})`,
        { cause: err },
      );
    }
    this.held = watermark;
  }
}

function rolledBack(file: string, store: number, held: Watermark, accept: number | undefined): StoreWatermarkError {
  const reused =
    accept === store && held.accepted === store
      ? ` TREASURY_SIGNER_ACCEPT_STORE_GENERATION=${store} was already used once for a store of that generation; it does not accept a second restore.`
      : '';
  return new StoreWatermarkError(
    'store_rolled_back',
    { file, store_generation: store, seen_generation: held.generation },
    `the policy store is older than this signer has seen: restored from a backup? Its generation is ${store}, ` +
      `and TREASURY_SIGNER_STORE_WATERMARK_FILE ${file} holds ${held.generation}. Accounts, wallets and signed ` +
      `policies recorded since are missing from it (an owner's newer policy would be undone, a wallet left to whoever ` +
      `signs its first policy). Restore the newest copy of the store; or, to start on this one, have the owners' ` +
      `newest policies presented again and set TREASURY_SIGNER_ACCEPT_STORE_GENERATION=${store}.${reused}`,
  );
}
