/**
 * `npm run bench:seen-keys`: what the pay path's memory of Idempotency-Keys seen (src/api/pay/snapshot-cache.ts
 * `firstUseOfKey`) holds when full — 100,000 keys, the heap after full collections beside the heap before — and what a
 * call costs, beside the same memory holding each wallet id and key joined as text (what it held until December 7),
 * measured in the same run. Each call gets a fresh flat string for the wallet id and one for the key, as a route
 * parameter and a header reach the route (1,000 wallets, keys as the SDK makes them: src/sdk/new-idempotency-key.ts);
 * a call's time includes making them.
 * Runs itself again with `--expose-gc` when started without it. Not for tests: the byte counts are V8's, the
 * timings move with the machine's load; the ratios are the figures to read.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { LRUCache } from 'lru-cache';
import { MAX_SEEN_KEYS, SnapshotCache } from '../src/api/pay/snapshot-cache.js';
import { newIdempotencyKey } from '../src/sdk/new-idempotency-key.js';

const WALLETS = 1_000;
const ROUNDS = 3;

interface Measured {
  bytesPerKey: number;
  microsPerCall: number;
}

/**
 * `count` texts of equal length made by `make`, laid end to end outside the heap, read back one at a time as a fresh
 * flat string. Made here, so that no frame of the measurement still holds them.
 */
function textsOffHeap(count: number, make: (i: number) => string) {
  const texts = Array.from({ length: count }, (_, i) => make(i));
  const width = texts[0]!.length;
  const buffer = Buffer.from(texts.join(''), 'latin1');
  return (i: number) => buffer.toString('latin1', i * width, (i + 1) * width);
}

function measure(label: string, firstUse: () => (walletId: string, key: string) => boolean): Measured {
  const gc = globalThis.gc!;
  const walletAt = textsOffHeap(WALLETS, () => `wal_${randomUUID().replaceAll('-', '')}`);
  const keyAt = textsOffHeap(MAX_SEEN_KEYS, () => newIdempotencyKey('account'));
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const use = firstUse();
  let seen = 0;
  const started = process.hrtime.bigint();
  // Each call with a wallet id and a key made for it, as a request's route parameter and header are.
  for (let i = 0; i < MAX_SEEN_KEYS; i++) if (use(walletAt(i % WALLETS), keyAt(i))) seen++;
  const micros = Number(process.hrtime.bigint() - started) / 1e3;
  gc();
  gc();
  const held = process.memoryUsage().heapUsed - before;
  if (seen !== MAX_SEEN_KEYS) throw new Error(`${label}: ${seen} of ${MAX_SEEN_KEYS} keys were new`);
  // Also keeps the memory alive past the measurement.
  if (use(walletAt(0), keyAt(0))) throw new Error(`${label}: a key seen read as new`);
  return { bytesPerKey: held / MAX_SEEN_KEYS, microsPerCall: micros / MAX_SEEN_KEYS };
}

/** The memory as it was: the joined text itself in the same LRU. */
function joinedText() {
  const seen = new LRUCache<string, true>({ max: MAX_SEEN_KEYS });
  return (walletId: string, key: string) => {
    const id = `${walletId}|${key}`;
    if (seen.has(id)) return false;
    seen.set(id, true);
    return true;
  };
}

function main(): void {
  if (typeof globalThis.gc !== 'function') {
    const self = fileURLToPath(import.meta.url);
    const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', self], { stdio: 'inherit' });
    process.exit(run.status ?? 1);
  }
  const ref = 'joined text (reference)';
  const ours = 'SnapshotCache.firstUseOfKey';
  const rows: Array<[string, Measured]> = [];
  for (let round = 0; round < ROUNDS; round++) {
    rows.push([ref, measure(ref, joinedText)]);
    rows.push([
      ours,
      measure(ours, () => {
        const cache = new SnapshotCache();
        return (walletId, key) => cache.firstUseOfKey(walletId, key);
      }),
    ]);
  }
  const mean = (label: string, pick: (m: Measured) => number) => {
    const values = rows.filter(([l]) => l === label).map(([, m]) => pick(m));
    return values.reduce((a, b) => a + b, 0) / values.length;
  };
  console.log(`\n${MAX_SEEN_KEYS.toLocaleString('en')} keys over ${WALLETS} wallets, ${ROUNDS} rounds alternated\n`);
  console.log('| memory of keys seen | bytes a key | MB held | µs a call | ratio to the reference |');
  console.log('|---|---|---|---|---|');
  for (const label of [ref, ours]) {
    const bytes = mean(label, (m) => m.bytesPerKey);
    const micros = mean(label, (m) => m.microsPerCall);
    const ratio =
      label === ref
        ? ''
        : `bytes ${(bytes / mean(ref, (m) => m.bytesPerKey)).toFixed(2)}×, time ${(micros / mean(ref, (m) => m.microsPerCall)).toFixed(2)}×`;
    console.log(
      `| ${label} | ${Math.round(bytes)} | ${((bytes * MAX_SEEN_KEYS) / 1e6).toFixed(1)} | ${micros.toFixed(2)} | ${ratio} |`,
    );
  }
}

main();
