/**
 * Keeps the signer's per-wallet windows (./wallet-limiter.ts) across restarts, in one file
 * (TREASURY_SIGNER_LIMITS_STATE_FILE): read and validated at start, rewritten whole at start (so an unwritable
 * path stops the signer before it serves, an older version's file is migrated, and a torn last line is dropped),
 * then every second when something changed — one journal line per wallet changed since the last save, appended
 * (./limits-journal.ts: a save costs what changed, not how many wallets signed today; the file is compacted in
 * slices when the journal outgrows the windows) — and rewritten whole on shutdown, when it is again the one JSON
 * document earlier versions wrote. The text, and how it is checked, is ./limits-state-format.ts.
 *
 * Wallets are keyed as ./wallet-limiter.ts keys them: an EVM wallet by its lower-case 0x address, a Solana
 * wallet by its base58 address as spelled (32 bytes, checked by the protocol's own `solanaAddressSchema`). The
 * key schema that reads the file also checks every wallet key before its line is written, so a key the next
 * start would refuse is never written.
 *
 * Protects against: the restart hole — a signer restarted (crashed, killed, redeployed) no longer starts
 * with empty windows, so a front that can make it restart cannot reset what each wallet may still sign;
 * a corrupted or foreign file (it is refused at start, naming the file and line: the operator decides to move it
 * away); a crash in the middle of an append (the torn last line is dropped at start: it was not yet saved);
 * a file the signer wrote itself and then refuses (a wallet key the schema does not know is never written:
 * that wallet's line is left out, and the failure logged, while signing goes on); a front that makes many wallets
 * sign once each, making every save (and so every signature behind it) slower.
 * Known limits: the signatures of the last second before a kill -9 or a crash are not in the file (after
 * a crash the uncaught-exception handler still appends them); a file edited by someone who can write the signer's
 * directory can lower the counts (that user can read the PIN anyway); reading the file at start, and the rewrites
 * at start and at shutdown, cost time in proportion to the wallets held (tens of microseconds each).
 */
import fs from 'node:fs';
import { LimitsJournal, type JournalOptions } from './limits-journal.js';
import { LimitsStateFileError, unwritable } from './limits-state-error.js';
import { journalLine, parseLimitsState, snapshotText, walletKeyReadsBack } from './limits-state-format.js';
import type { LimiterSnapshot, WalletLimiter } from './wallet-limiter.js';

export { LimitsStateFileError, type LimitsStateFileErrorCode } from './limits-state-error.js';

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
  const parsed = parseLimitsState(text);
  if (!parsed.ok)
    throw new LimitsStateFileError(
      'not_a_state_file',
      file,
      `TREASURY_SIGNER_LIMITS_STATE_FILE ${file} is not a signer limits state file; move it away to start with empty windows` +
        (parsed.line > 1 ? ` (line ${parsed.line} is not a record)` : ''),
      { line: parsed.line },
    );
  return parsed.snapshot;
}

/**
 * Writes the snapshot as a whole file (temporary file, 0600, synced, renamed over the old one), once every wallet
 * key is one the file's schema reads back; otherwise nothing is written (`invalid_snapshot`: the previous file stays).
 */
export function writeLimitsState(file: string, snapshot: LimiterSnapshot): void {
  if (!Object.keys(snapshot.wallets).every(walletKeyReadsBack))
    throw new LimitsStateFileError(
      'invalid_snapshot',
      file,
      `a wallet key would not read back from TREASURY_SIGNER_LIMITS_STATE_FILE ${file}; not written`,
    );
  const tmp = `${file}.${process.pid}.tmp`;
  // A leftover (a crash, or a symlink planted there) is unlinked, not followed; `wx` refuses one planted meanwhile.
  fs.rmSync(tmp, { force: true });
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeFileSync(fd, snapshotText(snapshot));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

export interface LimitsPersistence {
  /** Saves now what changed since the last save, if anything (throws on a failed write). */
  flush(): void;
  /** Stops the timer, saves a last time and rewrites the file whole. */
  stop(): void;
}

/** Tuning of the journal (tests use small ones); the defaults suit the signer. */
export type LimitsPersistenceOptions = Partial<Pick<JournalOptions, 'minJournalBytes' | 'sliceWallets' | 'compacted'>>;

const DEFAULTS = { minJournalBytes: 1 << 20, sliceWallets: 128 } as const;

/**
 * Restores `limiter` from `file`, rewrites it at once (an unwritable path throws here, at start), then saves
 * every `intervalMs` what changed; `onError` hears about a failed periodic save or compaction (signing goes on).
 */
export function persistLimits(
  limiter: WalletLimiter,
  file: string,
  onError: (err: unknown) => void,
  intervalMs = 1000,
  options: LimitsPersistenceOptions = {},
): LimitsPersistence {
  const saved = readLimitsState(file);
  if (saved) limiter.restore(saved);
  let journal: LimitsJournal;
  try {
    journal = LimitsJournal.open(file, limiter, { ...DEFAULTS, ...options, onError });
  } catch (err) {
    throw unwritable(file, err);
  }
  limiter.drainChanged(); // from here on the limiter names the wallets each save must write
  let written = limiter.changes;
  /** Wallets changed but not yet saved (a failed save leaves them here for the next). */
  const pending = new Set<string>();
  const flush = () => {
    const changes = limiter.changes;
    if (changes === written && pending.size === 0) return;
    for (const key of limiter.drainChanged()) pending.add(key);
    let lines = '';
    let refused = 0;
    for (const key of pending) {
      if (walletKeyReadsBack(key)) lines += journalLine(key, limiter.held(key) ?? {});
      else refused++;
    }
    if (lines) journal.append(lines);
    pending.clear();
    written = changes;
    if (refused > 0)
      throw new LimitsStateFileError(
        'invalid_snapshot',
        file,
        `${refused} wallet key(s) would not read back from TREASURY_SIGNER_LIMITS_STATE_FILE ${file}; not written`,
      );
  };
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
      let failure: unknown;
      try {
        flush();
      } catch (err) {
        failure = err;
      }
      try {
        // Whole again: one JSON document, as earlier versions read it (and a failed last append is covered).
        if (journal.hasRecords || failure !== undefined) {
          journal.compactNow();
          limiter.drainChanged();
          pending.clear();
          written = limiter.changes;
          failure = undefined;
        }
      } catch (err) {
        failure ??= err;
      } finally {
        journal.close();
      }
      if (failure !== undefined) throw failure;
    },
  };
}
