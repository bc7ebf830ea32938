/**
 * `filePurchaseStore`: a purchase store (purchase-store.ts) in a directory, one file per purchase, so that a
 * purchase outlives the process that began it — the CLI keeps its purchases here (under its state directory).
 * A file is named by the SHA-256 of its purchase key (the key never reaches a path), written whole to a
 * temporary file of mode 0600 and renamed over the old one (a crash leaves the old record or the new one,
 * never half of one); the directory is made 0700.
 *
 * Defends against: a purchase key steering a path; other local users reading a signed payment (0600/0700); a
 * directory growing without end (at most `maxPurchases` records: expired ones are removed when a purchase is
 * added; when the live ones fill it a new purchase is refused — forgetting a live payment could pay it twice);
 * one seller filling it for every other (at most MAX_LIVE_PURCHASES_PER_ORIGIN live purchases per origin:
 * purchase-origin-bound.ts);
 * a file that is not a record (over MAX_RECORD_BYTES, or a field this version knows out of shape: PurchaseStoreError
 * naming it, never read as absent, since it may hold a payment that can still settle); a record a newer buyer wrote
 * read as unreadable (fields this version does not know are dropped: `readStoredPurchaseSchema`).
 * Does not defend against: two processes resuming one purchase at once (both send the same payment; the
 * seller or the chain takes it once); a user who deletes the directory while a payment can still settle.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PurchaseStoreError } from './purchase-errors.js';
import { assertOriginHasRoom } from './purchase-origin-bound.js';
import {
  readStoredPurchaseSchema,
  storedPurchaseSchema,
  type PurchaseStore,
  type StoredPurchase,
} from './purchase-store.js';

/** The largest record file read (a signed payment and its entry take a few KiB). */
export const MAX_RECORD_BYTES = 65_536;
/** The default bound on the records a directory holds. */
export const DEFAULT_MAX_FILE_PURCHASES = 256;

export interface FilePurchaseStoreOptions {
  /** The directory (made, 0700, on the first write). */
  dir: string;
  /** At most this many records (1 to 4096; default DEFAULT_MAX_FILE_PURCHASES). */
  maxPurchases?: number;
  /** The clock expiry is judged by, unix ms (default Date.now). */
  now?: () => number;
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';

/** The record in `file`; undefined when there is none. */
async function readRecord(file: string): Promise<StoredPurchase | undefined> {
  let text: string;
  try {
    const handle = await fs.open(file, 'r');
    try {
      if ((await handle.stat()).size > MAX_RECORD_BYTES)
        throw new PurchaseStoreError(`holds an oversized file ${file}`);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  // Fields a newer buyer added are dropped; a known field out of shape still makes the record unreadable.
  let parsed: ReturnType<typeof readStoredPurchaseSchema.safeParse>;
  try {
    parsed = readStoredPurchaseSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = readStoredPurchaseSchema.safeParse(undefined);
  }
  if (!parsed.success) throw new PurchaseStoreError(`holds an unreadable purchase ${file} (remove it to forget it)`);
  return parsed.data;
}

export function filePurchaseStore(options: FilePurchaseStoreOptions): PurchaseStore {
  const max = options.maxPurchases ?? DEFAULT_MAX_FILE_PURCHASES;
  if (!Number.isInteger(max) || max < 1 || max > 4096)
    throw new PurchaseStoreError('bound must be a whole number from 1 to 4096');
  const now = options.now ?? Date.now;
  const dir = path.resolve(options.dir);
  const fileOf = (key: string) => path.join(dir, `${createHash('sha256').update(key, 'utf8').digest('hex')}.json`);

  /** The records still alive, by file: expired ones are removed; unreadable ones stay (and count). */
  async function liveFiles(): Promise<Map<string, StoredPurchase | 'unreadable'>> {
    const names = (await fs.readdir(dir).catch((err: unknown) => (isMissing(err) ? [] : Promise.reject(err)))).filter(
      (n) => /^[0-9a-f]{64}\.json$/.test(n),
    );
    const live = new Map<string, StoredPurchase | 'unreadable'>();
    for (const name of names) {
      const file = path.join(dir, name);
      const record = await readRecord(file).catch(() => 'unreadable' as const);
      if (record !== 'unreadable' && record !== undefined && record.expiresAt <= now())
        await fs.rm(file, { force: true });
      else if (record !== undefined) live.set(file, record);
    }
    return live;
  }

  async function write(file: string, record: StoredPurchase): Promise<void> {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${randomUUID()}.tmp`;
    try {
      await fs.writeFile(tmp, JSON.stringify(record), { mode: 0o600, flag: 'wx' });
      await fs.rename(tmp, file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
  }

  return {
    get: (key) => readRecord(fileOf(key)),
    async put(key, purchase) {
      const record = storedPurchaseSchema.parse(purchase);
      const file = fileOf(key);
      const live = await liveFiles();
      if (!live.has(file)) {
        const readable = [...live.values()].filter((r): r is StoredPurchase => r !== 'unreadable');
        assertOriginHasRoom(readable, record, now());
        if (live.size >= max) throw new PurchaseStoreError(`holds ${max} live purchases`);
      }
      await write(file, record);
    },
    async delete(key) {
      await fs.rm(fileOf(key), { force: true });
    },
  };
}
