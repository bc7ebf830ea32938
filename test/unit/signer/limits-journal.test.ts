/**
 * The signer's limits state file as a journal (signer/limits/limits-state-file.ts, ./limits-journal.ts), on a
 * temporary folder with the real limiter: a save after one wallet changed appends that wallet's line and nothing
 * else, whether 50 or 5,000 wallets are held (the file before is a prefix of the file after); a torn last line (a
 * crash mid-append, or a failed write) is dropped at read and never followed by another line; a line damaged in the
 * middle is refused, naming it; a file of the previous version loads and is migrated, and a stop leaves one JSON
 * document again; compaction in slices, with saves in between, keeps the file reading back exactly what the limiter
 * holds after every save; a compaction that cannot write is reported while saves go on; leftover temporary files
 * are removed at start, never followed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  LimitsStateFileError,
  persistLimits,
  readLimitsState,
  type LimitsPersistence,
  type LimitsPersistenceOptions,
} from '../../../signer/limits/limits-state-file.js';
import { journalLine } from '../../../signer/limits/limits-state-format.js';
import { WalletLimiter, type WalletLimit } from '../../../signer/limits/wallet-limiter.js';
import { fileTempDir } from '../../support/temp-dirs.js';

const limits: WalletLimit[] = [
  { name: 'wallet_signatures_minute', measure: 'signatures', windowSeconds: 60, max: 5n },
  { name: 'wallet_amount_hour', measure: 'amount', windowSeconds: 3600, max: 1_000_000n },
];
/** No periodic save during a test: each calls `flush` itself. */
const NEVER = 3_600_000;

const newAddress = () => '0x' + randomBytes(20).toString('hex');

describe('signer limits state journal', () => {
  const clock = { now: 1_800_000_000_000 };
  const stateFile = () => path.join(fileTempDir('treasury-limits-journal-'), 'limits-state.json');
  const opened: LimitsPersistence[] = [];
  afterEach(() => {
    for (const p of opened.splice(0)) p.stop();
  });
  const persist = (limiter: WalletLimiter, file: string, options: LimitsPersistenceOptions = {}) => {
    const errors: unknown[] = [];
    const p = persistLimits(limiter, file, (err) => errors.push(err), NEVER, options);
    opened.push(p);
    return { p, errors };
  };
  const limiterWith = (wallets: number) => {
    const limiter = new WalletLimiter(limits, () => clock.now);
    for (let i = 0; i < wallets; i++) assert.equal(limiter.take(newAddress(), 1n).ok, true);
    return limiter;
  };
  /** A fresh limiter restored from `file` at the same time: what a restart would hold. */
  const restart = (file: string) => {
    const limiter = new WalletLimiter(limits, () => clock.now);
    const read = readLimitsState(file);
    if (read) limiter.restore(read);
    return limiter;
  };
  const notAStateFile = (line: number) => (e: unknown) =>
    e instanceof LimitsStateFileError && e.code === 'not_a_state_file' && e.details.line === line;

  it('a save after one wallet changed appends its line alone, the same bytes among 50 or 5,000 wallets', () => {
    const grown: number[] = [];
    for (const wallets of [50, 5_000]) {
      const file = stateFile();
      const limiter = limiterWith(wallets);
      const { p } = persist(limiter, file);
      const before = fs.readFileSync(file);
      const wallet = '0x857b06519e91e3a54538791bdbb0e22373e36b66';
      assert.equal(limiter.take(wallet, 7n).ok, true);
      p.flush();
      const after = fs.readFileSync(file);
      assert.ok(after.subarray(0, before.length).equals(before), 'nothing written before is rewritten');
      const appended = after.subarray(before.length).toString('utf8');
      assert.equal(appended, journalLine(wallet, limiter.held(wallet)!), 'one line: that wallet now');
      grown.push(after.length - before.length);
      p.flush();
      assert.equal(fs.statSync(file).size, after.length, 'nothing changed: nothing written');
      if (wallets === 50) assert.deepEqual(restart(file).snapshot(), limiter.snapshot());
    }
    assert.equal(grown[0], grown[1], 'what a save writes does not depend on how many wallets are held');
  });

  it('drops a torn last line (a crash mid-append) at read, and rewrites the file whole at the next start', () => {
    const file = stateFile();
    const limiter = limiterWith(3);
    const { p } = persist(limiter, file);
    const wallet = newAddress();
    limiter.take(wallet, 5n);
    p.flush();
    const saved = limiter.snapshot();
    const whole = fs.readFileSync(file, 'utf8');
    fs.appendFileSync(file, journalLine(newAddress(), { wallet_amount_hour: [[1, '9']] }).slice(0, 30));
    assert.deepEqual(readLimitsState(file), saved, 'the torn line is dropped, the saved lines are kept');

    const again = new WalletLimiter(limits, () => clock.now);
    const { p: p2 } = persist(again, file);
    assert.deepEqual(again.snapshot(), saved);
    const rewritten = fs.readFileSync(file, 'utf8');
    assert.ok(rewritten.endsWith('\n') && rewritten.indexOf('\n') === rewritten.length - 1, 'one whole line');
    assert.notEqual(rewritten, whole);
    again.take(wallet, 1n);
    p2.flush();
    assert.deepEqual(restart(file).snapshot(), again.snapshot(), 'the next line follows a whole one');
  });

  it('cuts off what a failed append left before the next save: no line ever follows a torn one', () => {
    const file = stateFile();
    const limiter = limiterWith(3);
    const { p } = persist(limiter, file);
    const [a, b] = [newAddress(), newAddress()];
    limiter.take(a, 5n);
    const realWriteSync = fs.writeSync;
    let failures = 0;
    // The disk fills up half way through the save: part of the line is written, then the write fails.
    (fs as { writeSync: unknown }).writeSync = (fd: number, buf: Buffer, offset: number, length: number) => {
      failures++;
      realWriteSync(fd, buf, offset, Math.floor(length / 2));
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    };
    try {
      assert.throws(
        () => p.flush(),
        (e: unknown) => e instanceof LimitsStateFileError && e.code === 'unwritable',
      );
    } finally {
      (fs as { writeSync: unknown }).writeSync = realWriteSync;
    }
    assert.equal(failures, 1);
    assert.ok(!fs.readFileSync(file, 'utf8').endsWith('\n'), 'a torn line was left');
    assert.equal(readLimitsState(file)?.wallets[a], undefined, 'the torn line is not read');
    limiter.take(b, 6n);
    p.flush();
    assert.deepEqual(restart(file).snapshot(), limiter.snapshot(), 'both wallets saved, after the tear was cut off');
  });

  it('refuses a file damaged in its middle, naming the line; a last line that is whole but no record too', () => {
    const file = stateFile();
    const limiter = limiterWith(2);
    const { p } = persist(limiter, file);
    for (let i = 0; i < 3; i++) {
      limiter.take(newAddress(), 1n);
      p.flush();
    }
    p.stop();
    opened.length = 0;
    const lines = fs.readFileSync(file, 'utf8');
    assert.equal(lines.split('\n').length, 2, 'a stop leaves one line');

    const wallet = newAddress();
    const record = journalLine(wallet, { wallet_amount_hour: [[1, '3']] });
    fs.writeFileSync(file, lines + record + '{"w":"0xnot-an-address","l":{}}\n' + record);
    assert.throws(() => readLimitsState(file), notAStateFile(3));
    const before = fs.readFileSync(file, 'utf8');
    assert.throws(
      () => persistLimits(new WalletLimiter(limits, () => clock.now), file, () => undefined, NEVER),
      notAStateFile(3),
    );
    assert.equal(fs.readFileSync(file, 'utf8'), before, 'a refused file is left as it is');
    fs.writeFileSync(file, lines + record + 'garbage\n');
    assert.throws(() => readLimitsState(file), notAStateFile(3));
    fs.writeFileSync(file, lines + record + '\n');
    assert.throws(() => readLimitsState(file), notAStateFile(3), 'an empty line is no record');
    fs.writeFileSync(file, 'x' + lines);
    assert.throws(() => readLimitsState(file), notAStateFile(1));
  });

  it("loads the previous version's file, migrates it, and leaves one JSON document again at stop", () => {
    const file = stateFile();
    const old = newAddress();
    // Exactly what the previous version wrote: the snapshot as JSON, no newline.
    fs.writeFileSync(
      file,
      JSON.stringify({ v: 1, wallets: { [old]: { wallet_signatures_minute: [[Math.floor(clock.now / 1000), '5']] } } }),
      { mode: 0o600 },
    );
    const limiter = new WalletLimiter(limits, () => clock.now);
    const { p } = persist(limiter, file);
    assert.equal(limiter.take(old, 1n).ok, false, "the old file's signatures count");
    assert.ok(fs.readFileSync(file, 'utf8').endsWith('\n'), 'migrated at start');
    const fresh = newAddress();
    limiter.take(fresh, 2n);
    p.flush();
    assert.equal(fs.readFileSync(file, 'utf8').split('\n').length, 3, 'the change was appended');
    p.stop();
    opened.length = 0;
    const document = JSON.parse(fs.readFileSync(file, 'utf8')) as { v: number; wallets: Record<string, unknown> };
    assert.equal(document.v, 1);
    assert.deepEqual(Object.keys(document.wallets).sort(), [old, fresh].sort());
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  });

  it('compacts in slices while saves go on: after every save the file reads back exactly what the limiter holds', async () => {
    const file = stateFile();
    const limiter = limiterWith(40);
    let compactions = 0;
    const { p, errors } = persist(limiter, file, {
      minJournalBytes: 2_000,
      sliceWallets: 3,
      compacted: (replaced) => {
        if (replaced) compactions++;
      },
    });
    // A compaction's fsync runs on libuv's pool; on a busy machine it may take longer than any number of loop
    // turns. Each step waits for one in flight, as a signer's own pace would (a turn per signature).
    const fsync = fs.fsync;
    let syncing = 0;
    fs.fsync = ((fd: number, callback: (err: NodeJS.ErrnoException | null) => void) => {
      syncing++;
      fsync(fd, (err) => {
        syncing--;
        callback(err);
      });
    }) as typeof fs.fsync;
    const fsyncsSettled = async () => {
      while (syncing > 0) await new Promise((resolve) => setTimeout(resolve, 1));
    };
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const wallets = Array.from({ length: 60 }, newAddress);
    const receipts: Parameters<WalletLimiter['giveBack']>[0][] = [];
    let largest = 0;
    try {
      for (let step = 0; step < 600; step++) {
        clock.now += Math.floor(random() * 1000);
        const r = random();
        if (r < 0.8) {
          const taken = limiter.take(wallets[Math.floor(random() * wallets.length)]!, BigInt(1 + Math.floor(r * 50)));
          if (taken.ok) receipts.push(taken.receipt);
        } else if (r < 0.9 && receipts.length > 0)
          limiter.giveBack(receipts.splice(Math.floor(random() * receipts.length), 1)[0]!);
        if (random() < 0.3) {
          p.flush();
          assert.deepEqual(restart(file).snapshot(), limiter.snapshot(), `after the save of step ${step}`);
        } else if (step % 5 === 0) readLimitsState(file); // a crash now would find a file it can read
        largest = Math.max(largest, fs.statSync(file).size);
        await new Promise((resolve) => setImmediate(resolve)); // a compaction's slice may run
        await fsyncsSettled();
      }
    } finally {
      fs.fsync = fsync;
    }
    assert.deepEqual(errors, []);
    assert.ok(compactions >= 3, `compacted ${compactions} times`);
    const live = Buffer.byteLength(JSON.stringify(limiter.snapshot()));
    assert.ok(largest < 3 * live, `the file stayed within three times the live windows: ${largest} for ${live}`);
    p.stop();
    opened.length = 0;
    assert.deepEqual(restart(file).snapshot(), limiter.snapshot());
    assert.deepEqual(fs.readdirSync(path.dirname(file)), [path.basename(file)], 'no temporary file is left');
  });

  it('reports a compaction that cannot write its temporary file, saves on, and compacts once it can', async () => {
    const file = stateFile();
    const limiter = limiterWith(10);
    const ends: boolean[] = [];
    const { p, errors } = persist(limiter, file, {
      minJournalBytes: 1_000,
      sliceWallets: 4,
      compacted: (replaced) => ends.push(replaced),
    });
    const saveUntil = async (done: () => boolean) => {
      for (let i = 0; i < 10_000 && !done(); i++) {
        limiter.take(newAddress(), 1n);
        p.flush();
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const blocker = `${file}.${process.pid}.tmp`;
    fs.mkdirSync(blocker); // a directory where the rewrite's temporary file goes: it cannot start
    await saveUntil(() => ends.length > 0);
    assert.deepEqual(ends, [false]);
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof LimitsStateFileError && errors[0].code === 'unwritable');
    assert.deepEqual(restart(file).snapshot(), limiter.snapshot(), 'the saves went on');
    fs.rmdirSync(blocker);
    await saveUntil(() => ends.includes(true));
    assert.deepEqual(ends, [false, true]);
    assert.equal(errors.length, 1);
    assert.deepEqual(restart(file).snapshot(), limiter.snapshot());
  });

  it('removes temporary files a crash left at start, never following one planted as a symlink', () => {
    const file = stateFile();
    const target = path.join(fileTempDir('treasury-limits-victim-'), 'victim');
    fs.writeFileSync(target, 'not yours', { mode: 0o600 });
    fs.symlinkSync(target, `${file}.4242.tmp`);
    fs.writeFileSync(`${file}.4243.tmp`, '{"v":1,"wallets":{', { mode: 0o600 });
    fs.writeFileSync(`${file}.notes`, 'kept');
    persist(limiterWith(1), file);
    assert.equal(fs.readFileSync(target, 'utf8'), 'not yours');
    assert.deepEqual(fs.readdirSync(path.dirname(file)).sort(), [path.basename(file), `${path.basename(file)}.notes`]);
  });
});
