/**
 * Keeps the signer's per-wallet windows (./wallet-limiter.ts) across restarts, in one small JSON file
 * (TREASURY_SIGNER_LIMITS_STATE_FILE): read and validated at start, written at start (so an unwritable path
 * stops the signer before it serves), then every second when something changed, and on shutdown. Each
 * write goes to a temporary file (0600) renamed over the old one: a crash leaves the old or the new state,
 * never half of one.
 *
 * Protects against: the restart hole — a signer restarted (crashed, killed, redeployed) no longer starts
 * with empty windows, so a front that can make it restart cannot reset what each wallet may still sign;
 * a corrupted or foreign file (it is refused at start, naming the file: the operator decides to move it away).
 * Known limits: the signatures of the last second before a kill -9 or a crash are not in the file (after
 * a crash the uncaught-exception handler still tries one last write); a file edited by someone who can
 * write the signer's directory can lower the counts (that user can read the PIN anyway); writes run on the
 * event loop (JSON of every active wallet's buckets: milliseconds for thousands of wallets).
 */
import fs from 'node:fs';
import { z } from 'zod';
import { SIGNER_LIMIT_NAMES } from '../protocol/signer-protocol.js';
import type { LimiterSnapshot, WalletLimiter } from './wallet-limiter.js';
import { BUCKETS } from './rolling-sum.js';

const rollingLimitName = z.enum(SIGNER_LIMIT_NAMES).exclude(['per_signature']);
const snapshotSchema = z
  .object({
    v: z.literal(1),
    wallets: z.record(
      z.string().regex(/^0x[0-9a-f]{40}$/),
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

export class LimitsStateFileError extends Error {
  override readonly name = 'LimitsStateFileError';
}

/** The saved windows, or undefined when there is no file yet; a file that is not one is refused. */
export function readLimitsState(file: string): LimiterSnapshot | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new LimitsStateFileError(
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
      `TREASURY_SIGNER_LIMITS_STATE_FILE ${file} is not a signer limits state file; move it away to start with empty windows`,
    );
  return parsed.data as LimiterSnapshot;
}

/** Writes the snapshot atomically (temporary file, 0600, renamed over the old one). */
export function writeLimitsState(file: string, snapshot: LimiterSnapshot): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(snapshot), { mode: 0o600 });
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
    throw new LimitsStateFileError(
      `cannot write TREASURY_SIGNER_LIMITS_STATE_FILE ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
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
