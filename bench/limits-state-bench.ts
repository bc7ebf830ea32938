/**
 * `node --import tsx bench/limits-state-bench.ts [wallets,…]`: what the signer's per-second limits save costs on its
 * event loop (signer/limits/limits-state-file.ts) with many wallets held — as a front that makes many wallets sign
 * once each would leave it. For each count (default 1,000 and 50,000): the median save after one wallet changed
 * (a journal append), beside the whole-file rewrite every save used to be; then, at the largest count, every wallet
 * signing again, 1,000 per save, until a compaction starts (the longest of those saves), then the compaction in
 * slices alone (the longest the event loop waited meanwhile). Last line: the one-wallet save at the largest count ÷ at the smallest (about 1 when a save costs what
 * changed; the whole-file rewrite grows with the wallets).
 * Not for tests: timings move with the machine's load; the ratio is the figure to read.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { persistLimits, writeLimitsState } from '../signer/limits/limits-state-file.js';
import { WalletLimiter, type WalletLimit } from '../signer/limits/wallet-limiter.js';

const LIMITS: WalletLimit[] = [
  { name: 'wallet_amount_hour', measure: 'amount', windowSeconds: 3600, max: 250_000_000n },
  { name: 'wallet_amount_day', measure: 'amount', windowSeconds: 86400, max: 1_000_000_000n },
  { name: 'wallet_signatures_minute', measure: 'signatures', windowSeconds: 60, max: 120n },
  { name: 'wallet_signatures_hour', measure: 'signatures', windowSeconds: 3600, max: 3600n },
];
const counts = (process.argv[2] ?? '1000,50000').split(',').map(Number);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'limits-state-bench-'));

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (v: number) => Math.round(v * 100) / 100;

async function measure(wallets: number, churn: boolean) {
  const file = path.join(dir, `state-${wallets}.json`);
  const limiter = new WalletLimiter(LIMITS);
  const keys = Array.from({ length: wallets }, () => '0x' + randomBytes(20).toString('hex'));
  for (const key of keys) limiter.take(key, 1n);
  let compacted = 0;
  const startAt = performance.now();
  const saver = persistLimits(limiter, file, (err) => console.error(err), 3_600_000, {
    compacted: () => compacted++,
  });
  const startMs = performance.now() - startAt;
  const saves: number[] = [];
  for (let i = 0; i < 21; i++) {
    limiter.take(keys[Math.floor(Math.random() * keys.length)]!, 1n);
    const t = performance.now();
    saver.flush();
    saves.push(performance.now() - t);
  }
  const rewrites: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    writeLimitsState(path.join(dir, 'whole.json'), limiter.snapshot());
    rewrites.push(performance.now() - t);
  }
  const line: Record<string, number> = {
    wallets,
    start_ms: ms(startMs),
    save_one_wallet_ms: ms(median(saves)),
    whole_rewrite_ms: ms(median(rewrites)),
    file_mb: ms(fs.statSync(file).size / 1e6),
  };
  if (churn) {
    // Every wallet signs again, 1,000 per save, until the journal outgrows the windows and a compaction starts.
    const tmp = `${file}.${process.pid}.tmp`;
    let longestSave = 0;
    for (let i = 0; !fs.existsSync(tmp) && compacted === 0 && i < 10 * wallets; i += 1000) {
      for (let j = i; j < i + 1000; j++) limiter.take(keys[j % keys.length]!, 1n);
      const t = performance.now();
      saver.flush();
      longestSave = Math.max(longestSave, performance.now() - t);
    }
    // The compaction alone: the longest the event loop waits while it goes, a slice at a time.
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const compactStart = performance.now();
    while (compacted === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    loop.disable();
    Object.assign(line, {
      save_1000_wallets_longest_ms: ms(longestSave),
      compaction_ms: ms(performance.now() - compactStart),
      compaction_longest_loop_delay_ms: ms(loop.max / 1e6),
      file_mb_after_compaction: ms(fs.statSync(file).size / 1e6),
    });
  }
  const t = performance.now();
  saver.stop();
  line.stop_ms = ms(performance.now() - t);
  console.log(JSON.stringify(line));
  return median(saves);
}

const results: number[] = [];
for (const [i, wallets] of counts.entries()) results.push(await measure(wallets, i === counts.length - 1));
console.log(
  `one-wallet save at ${counts.at(-1)} wallets ÷ at ${counts[0]}: ${(results.at(-1)! / results[0]!).toFixed(2)}`,
);
fs.rmSync(dir, { recursive: true, force: true });
