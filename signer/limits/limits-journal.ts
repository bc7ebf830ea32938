/**
 * The signer's limits state file (./limits-state-format.ts) kept current at the cost of what changed, not of how
 * many wallets it holds: a save appends one line per wallet changed since the previous save (`append`, on the event
 * loop, O(those lines)); when the journal has grown past the saved windows (and past `minJournalBytes`), the file
 * is compacted — the live windows rewritten as a new first line — a slice of `sliceWallets` wallets per turn of
 * the event loop, into a temporary file that the lines saved meanwhile follow too, synced (fsync, off the event
 * loop), then renamed over the file. The file's length stays within about twice the live windows (plus
 * `minJournalBytes`), and each byte appended pays for about one byte rewritten later, in slices.
 *
 * Crash safety, as before the journal: once a save has returned, its lines are in the file (the kernel's; no fsync
 * per save, as the whole-file writes never had one: a power cut may lose the last seconds, a crash of the process
 * loses nothing saved). The file is always whole lines but for a torn last append, which the reader drops: a
 * failed append is cut off (ftruncate) before the next one, so no line ever follows a torn one. A compaction
 * replaces the file in one rename of a synced temporary file (0600, created exclusively after any leftover is
 * unlinked: a file or symlink planted at its path is removed or refused, never followed); a crash before the
 * rename leaves the old file and its journal, whole, and the temporary file is removed at the next start.
 *
 * Protects against: a front that makes many wallets sign once each turning every later save into a rewrite of all
 * of them, on the signer's one event loop (each signature then waits behind it). Known limits: opening, and the
 * last save at stop (`compactNow`), rewrite everything at once — at start before the signer serves, at stop after
 * its socket closed; each costs about what reading the file at start does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LimitsStateFileError, unwritable } from './limits-state-error.js';
import {
  SNAPSHOT_CLOSE,
  SNAPSHOT_OPEN,
  walletEntry,
  walletKeyReadsBack,
  type WalletHeld,
} from './limits-state-format.js';

/** The windows to keep: the limiter's wallets (./wallet-limiter.ts), walked as they go. */
export interface WalletWindows {
  keys(): IterableIterator<string>;
  held(key: string): WalletHeld | undefined;
}

export interface JournalOptions {
  /** The journal may grow past the saved windows' size, and past this many bytes, before it is compacted. */
  minJournalBytes: number;
  /** Wallets rewritten per turn of the event loop while compacting. */
  sliceWallets: number;
  /** Hears a background compaction that failed (the journal goes on, and compacts again after as much growth). */
  onError: (err: unknown) => void;
  /** Hears each background compaction end (whether it replaced the file). */
  compacted?: (replaced: boolean) => void;
}

/** The temporary file: created only if absent, appended to, readable by the signer's user alone. */
const CREATE_APPEND = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_APPEND;
/** The file itself, reopened after `close` (never through a symlink). */
const REOPEN_APPEND = fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_NOFOLLOW;
/** Bytes gathered before a rewrite writes them. */
const CHUNK_CHARS = 1 << 20;

function writeAll(fd: number, buf: Buffer): void {
  for (let done = 0; done < buf.length;) done += fs.writeSync(fd, buf, done, buf.length - done);
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Already gone: nothing of ours to keep.
  }
}

export class LimitsJournal {
  private fd: number | undefined;
  /** Bytes of whole lines in the file; past them, only what a failed append may have left. */
  private length = 0;
  /** Bytes of the file's first line (the windows at the last compaction). */
  private baseLength = 0;
  /** A failed append may have left part of a line past `length`: cut off before the next one. */
  private torn = false;
  private compactAt = 0;
  private running: Compaction | undefined;
  private closed = false;

  private constructor(
    private readonly file: string,
    private readonly wallets: WalletWindows,
    private readonly options: JournalOptions,
  ) {}

  /**
   * Writes every wallet's windows as the whole new file (which also migrates an older file and drops a torn last
   * line), after removing temporary files a crash left; throws `unwritable` (or `invalid_snapshot`).
   */
  static open(file: string, wallets: WalletWindows, options: JournalOptions): LimitsJournal {
    removeLeftovers(file);
    const journal = new LimitsJournal(file, wallets, options);
    journal.compactNow();
    return journal;
  }

  /** Whether the file holds journal lines past its first. */
  get hasRecords(): boolean {
    return this.length > this.baseLength;
  }

  /** Appends whole lines, at the cost of their size; throws `unwritable` (the file keeps only whole lines). */
  append(lines: string): void {
    const buf = Buffer.from(lines);
    const reopened = this.fd === undefined;
    let fd: number;
    try {
      fd = this.fd ?? this.reopen();
    } catch (err) {
      throw unwritable(this.file, err);
    }
    try {
      if (this.torn) {
        fs.ftruncateSync(fd, this.length);
        this.torn = false;
      }
      try {
        writeAll(fd, buf);
      } catch (err) {
        this.torn = true;
        throw err;
      }
    } catch (err) {
      throw unwritable(this.file, err);
    } finally {
      if (reopened) closeQuietly(fd);
    }
    this.length += buf.length;
    this.running?.follow(buf);
    if (!this.closed && !this.running && this.length > this.compactAt) this.startCompaction();
  }

  /**
   * Rewrites the file now, at once, from the windows held (a background compaction under way is dropped); throws
   * `unwritable`, or `invalid_snapshot` after writing every other wallet when a wallet key would not read back.
   */
  compactNow(): void {
    this.abortRunning();
    let compaction: Compaction | undefined;
    try {
      compaction = new Compaction(this.file, this.wallets);
      compaction.writeSlice(Number.POSITIVE_INFINITY);
      compaction.finishBase();
      fs.fsyncSync(compaction.fd);
      this.commit(compaction);
    } catch (err) {
      compaction?.abort();
      throw unwritable(this.file, err);
    }
    if (compaction.skipped > 0) throw this.invalid(compaction.skipped);
  }

  /** Drops a background compaction and closes the file; a later `append` reopens it for that write. */
  close(): void {
    this.closed = true;
    this.abortRunning();
    if (this.fd !== undefined) closeQuietly(this.fd);
    this.fd = undefined;
  }

  private reopen(): number {
    const fd = fs.openSync(this.file, REOPEN_APPEND);
    this.length = fs.fstatSync(fd).size;
    this.torn = false;
    return fd;
  }

  /** The compacted file takes the place of the old one; its descriptor becomes the journal's. */
  private commit(compaction: Compaction): void {
    fs.renameSync(compaction.tmp, this.file);
    if (this.fd !== undefined) closeQuietly(this.fd);
    this.fd = compaction.take();
    this.length = compaction.written;
    this.baseLength = compaction.baseBytes;
    this.torn = false;
    this.compactAt = this.baseLength + Math.max(this.baseLength, this.options.minJournalBytes);
    if (this.closed) this.close();
  }

  private startCompaction(): void {
    let compaction: Compaction;
    try {
      compaction = new Compaction(this.file, this.wallets);
    } catch (err) {
      this.failed(undefined, err);
      return;
    }
    this.running = compaction;
    const step = () => {
      if (this.running !== compaction) return;
      try {
        if (compaction.failure !== undefined) throw compaction.failure;
        if (!compaction.writeSlice(this.options.sliceWallets)) {
          setImmediate(step);
          return;
        }
        compaction.finishBase();
      } catch (err) {
        this.failed(compaction, err);
        return;
      }
      compaction.syncing = true;
      fs.fsync(compaction.fd, (err) => {
        compaction.syncing = false;
        if (this.running !== compaction) {
          compaction.abort();
          return;
        }
        try {
          if (err) throw err;
          if (compaction.failure !== undefined) throw compaction.failure;
          this.commit(compaction);
        } catch (failure) {
          this.failed(compaction, failure);
          return;
        }
        this.running = undefined;
        if (compaction.skipped > 0) this.options.onError(this.invalid(compaction.skipped));
        this.options.compacted?.(true);
      });
    };
    setImmediate(step);
  }

  private failed(compaction: Compaction | undefined, err: unknown): void {
    compaction?.abort();
    this.running = undefined;
    this.compactAt = this.length + Math.max(this.baseLength, this.options.minJournalBytes);
    this.options.onError(unwritable(this.file, err));
    this.options.compacted?.(false);
  }

  private abortRunning(): void {
    this.running?.abort();
    this.running = undefined;
  }

  private invalid(skipped: number): LimitsStateFileError {
    return new LimitsStateFileError(
      'invalid_snapshot',
      this.file,
      `${skipped} wallet key(s) would not read back from TREASURY_SIGNER_LIMITS_STATE_FILE ${this.file}; not written`,
    );
  }
}

/**
 * One rewrite of the file into its temporary file: the first line a slice of wallets at a time, then the journal
 * lines saved meanwhile (held until the first line ends, then written as they come).
 */
class Compaction {
  readonly tmp: string;
  readonly fd: number;
  written = 0;
  baseBytes = 0;
  skipped = 0;
  /** A journal line it could not follow with: it must not replace the file. */
  failure: unknown;
  syncing = false;
  private owned = true;
  private aborted = false;
  private first = true;
  private queue: Buffer[] | undefined = [];
  private readonly walk: Iterator<string>;

  constructor(
    file: string,
    private readonly wallets: WalletWindows,
  ) {
    this.tmp = `${file}.${process.pid}.tmp`;
    // A leftover (a crash, or a symlink planted there) is unlinked, not followed; O_EXCL refuses one planted meanwhile.
    fs.rmSync(this.tmp, { force: true });
    this.fd = fs.openSync(this.tmp, CREATE_APPEND, 0o600);
    this.walk = wallets.keys();
    try {
      this.write(Buffer.from(SNAPSHOT_OPEN));
    } catch (err) {
      this.abort();
      throw err;
    }
  }

  /** Writes up to `max` more wallets of the first line; true when every wallet has been met. */
  writeSlice(max: number): boolean {
    let text = '';
    let done = false;
    for (let n = 0; n < max; n++) {
      const next = this.walk.next();
      if (next.done) {
        done = true;
        break;
      }
      const held = this.wallets.held(next.value);
      if (!held) continue;
      if (!walletKeyReadsBack(next.value)) {
        this.skipped++;
        continue;
      }
      text += (this.first ? '' : ',') + walletEntry(next.value, held);
      this.first = false;
      if (text.length >= CHUNK_CHARS) {
        this.write(Buffer.from(text));
        text = '';
      }
    }
    if (text) this.write(Buffer.from(text));
    return done;
  }

  /** Ends the first line, then writes the journal lines saved while it was written. */
  finishBase(): void {
    this.write(Buffer.from(SNAPSHOT_CLOSE));
    this.baseBytes = this.written;
    const queued = this.queue ?? [];
    this.queue = undefined;
    for (const buf of queued) this.write(buf);
  }

  /** A journal line just saved to the file: this rewrite carries it too. */
  follow(buf: Buffer): void {
    if (this.failure !== undefined || this.aborted || !this.owned) return;
    if (this.queue) {
      this.queue.push(buf);
      return;
    }
    try {
      this.write(buf);
    } catch (err) {
      this.failure = err;
    }
  }

  /** The descriptor, now the journal's. */
  take(): number {
    this.owned = false;
    return this.fd;
  }

  /** Removes the temporary file; its descriptor is closed (after a sync under way, by its callback). */
  abort(): void {
    if (!this.owned) return;
    this.queue = undefined;
    if (!this.aborted) {
      this.aborted = true;
      // Once: after this, the path may already name another rewrite's temporary file.
      try {
        fs.rmSync(this.tmp, { force: true });
      } catch {
        // Removed at the next start.
      }
    }
    if (this.syncing) return;
    this.owned = false;
    closeQuietly(this.fd);
  }

  private write(buf: Buffer): void {
    writeAll(this.fd, buf);
    this.written += buf.length;
  }
}

/** Temporary files of this state file (`<file>.<pid>.tmp`) that a crash left: a rename never came. */
function removeLeftovers(file: string): void {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    if (!/^[0-9]{1,10}$/.test(name.slice(prefix.length, -'.tmp'.length))) continue;
    try {
      fs.rmSync(path.join(dir, name), { force: true });
    } catch {
      // A directory of that name is not ours: left alone.
    }
  }
}
