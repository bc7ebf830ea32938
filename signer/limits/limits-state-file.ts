/**
 * Keeps the signer's per-wallet windows (./wallet-limiter.ts) across restarts, in one small JSON file
 * (TREASURY_SIGNER_LIMITS_STATE_FILE): read and validated at start, written at start (so an unwritable path
 * stops the signer before it serves), then every second when something changed, and on shutdown. Each
 * write goes to a temporary file (0600) renamed over the old one: a crash leaves the old or the new state,
 * never half of one. The temporary file is created exclusively (`wx`) after any leftover is unlinked: a file or
 * symlink planted at its path is removed or refused, never followed.
 *
 * Wallets are keyed as ./wallet-limiter.ts keys them: an EVM wallet by its lower-case 0x address, a Solana
 * wallet by its base58 address as spelled (32 bytes, checked by the protocol's own `solanaAddressSchema`). The
 * key schema that reads the file also checks every wallet key of a snapshot before it is written, so a key the
 * next start would refuse is never written. (The bucket lists are the limiter's own integers, bounded by
 * the configured ceilings below 10^18; checking them too on every save cost eight times the JSON itself.)
 *
 * Protects against: the restart hole — a signer restarted (crashed, killed, redeployed) no longer starts
 * with empty windows, so a front that can make it restart cannot reset what each wallet may still sign;
 * a corrupted or foreign file (it is refused at start, naming the file: the operator decides to move it away);
 * a file the signer wrote itself and then refuses (a wallet key the schema does not know is never written:
 * the write fails, the previous file stays, and a periodic failure is logged while signing goes on).
 * Known limits: the signatures of the last second before a kill -9 or a crash are not in the file (after
 * a crash the uncaught-exception handler still tries one last write); a file edited by someone who can
 * write the signer's directory can lower the counts (that user can read the PIN anyway); writes run on the
 * event loop (checking and JSON of every active wallet's buckets: milliseconds for thousands of wallets).
 */
import fs from 'node:fs';
import { z } from 'zod';
import { BaseError } from '../../base/base-error.js';
import { SIGNER_LIMIT_NAMES, solanaAddressSchema } from '../protocol/signer-protocol.js';
import type { LimiterSnapshot, WalletLimiter } from './wallet-limiter.js';
import { BUCKETS } from './rolling-sum.js';

const rollingLimitName = z.enum(SIGNER_LIMIT_NAMES).exclude(['per_signature']);
/** A wallet as the limiter keys it: an EVM address in lower case, or a Solana wallet's base58 address of 32 bytes. */
const walletKeySchema = z.union([z.string().regex(/^0x[0-9a-f]{40}$/), solanaAddressSchema]);
const snapshotSchema = z
  .object({
    v: z.literal(1),
    wallets: z.record(
      walletKeySchema,
      z.partialRecord(
        rollingLimitName,
        z
          .array(
            z.tuple([
              z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
              z.string().regex(/^[1-9][0-9]{0,18}$/),
            ]),
          )
          .max(BUCKETS + 1),
      ),
    ),
  })
  .strict();

/**
 * Why the state file cannot be used: `unreadable` or `not_a_state_file` at start, `unwritable` at start or on a
 * save, `invalid_snapshot` when the windows held in memory would not read back (nothing is written then).
 */
export type LimitsStateFileErrorCode = 'unreadable' | 'not_a_state_file' | 'unwritable' | 'invalid_snapshot';

export class LimitsStateFileError extends BaseError<LimitsStateFileErrorCode, { file: string }> {
  override readonly name = 'LimitsStateFileError';
  constructor(code: LimitsStateFileErrorCode, file: string, message: string, options: { cause?: unknown } = {}) {
    super(code, { message, details: { file }, cause: options.cause });
  }
}

/** The saved windows, or undefined when there is no file yet; a file that is not one is refused. */
export function readLimitsState(file: string): LimiterSnapshot | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new LimitsStateFileError(
      'unreadable',
      file,
      `cannot read TREASURY_SIGNER_LIMITS_STATE_FILE ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let parsed;
  try {
    parsed = snapshotSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (!parsed?.success)
    throw new LimitsStateFileError(
      'not_a_state_file',
      file,
      `TREASURY_SIGNER_LIMITS_STATE_FILE ${file} is not a signer limits state file; move it away to start with empty windows`,
    );
  return parsed.data as LimiterSnapshot;
}

/** Wallet keys already found readable (the same wallets recur every second): one check each, not one per save. */
const readableKeys = new Set<string>();
const MAX_READABLE_KEYS = 200_000;

/** Whether every wallet key of `snapshot` is one `walletKeySchema` reads back. */
function keysReadBack(snapshot: LimiterSnapshot): boolean {
  for (const key of Object.keys(snapshot.wallets)) {
    if (readableKeys.has(key)) continue;
    if (!walletKeySchema.safeParse(key).success) return false;
    if (readableKeys.size >= MAX_READABLE_KEYS) readableKeys.clear();
    readableKeys.add(key);
  }
  return true;
}

/**
 * Writes the snapshot atomically (temporary file, 0600, renamed over the old one), once every wallet key is one
 * the file's schema reads back; otherwise nothing is written (`invalid_snapshot`: the previous file stays).
 */
export function writeLimitsState(file: string, snapshot: LimiterSnapshot): void {
  if (!keysReadBack(snapshot))
    throw new LimitsStateFileError(
      'invalid_snapshot',
      file,
      `a wallet key would not read back from TREASURY_SIGNER_LIMITS_STATE_FILE ${file}; not written`,
    );
  const tmp = `${file}.${process.pid}.tmp`;
  // A leftover (a crash, or a symlink planted there) is unlinked, not followed; `wx` refuses one planted meanwhile.
  fs.rmSync(tmp, { force: true });
  fs.writeFileSync(tmp, JSON.stringify(snapshot), { mode: 0o600, flag: 'wx' });
  fs.renameSync(tmp, file);
}

export interface LimitsPersistence {
  /** Writes now if anything changed since the last write (throws on a failed write). */
  flush(): void;
  /** Stops the timer and writes a last time. */
  stop(): void;
}

/**
 * Restores `limiter` from `file`, writes it back at once (an unwritable path throws here, at start), then
 * every `intervalMs` when it changed; `onError` hears about a failed periodic write (signing goes on).
 */
export function persistLimits(
  limiter: WalletLimiter,
  file: string,
  onError: (err: unknown) => void,
  intervalMs = 1000,
): LimitsPersistence {
  const saved = readLimitsState(file);
  if (saved) limiter.restore(saved);
  let written = -1;
  const flush = () => {
    const changes = limiter.changes;
    if (changes === written) return;
    writeLimitsState(file, limiter.snapshot());
    written = changes;
  };
  try {
    writeLimitsState(file, limiter.snapshot());
    written = limiter.changes;
  } catch (err) {
    if (err instanceof LimitsStateFileError) throw err;
    throw new LimitsStateFileError(
      'unwritable',
      file,
      `cannot write TREASURY_SIGNER_LIMITS_STATE_FILE ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause: err },
    );
  }
  const timer = setInterval(() => {
    try {
      flush();
    } catch (err) {
      onError(err);
    }
  }, intervalMs);
  timer.unref();
  return {
    flush,
    stop() {
      clearInterval(timer);
      flush();
    },
  };
}
