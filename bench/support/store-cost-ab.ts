/**
 * The cost of the signer's second check (docs/adr/0012-owner-signed-policies.md) as `npm run bench` shows it: the
 * same payments through a second API process on the same database, whose signer keeps no policy store, in one-second
 * slices alternating with the bench's own API and signer (./closed-loop.ts `driveAlternating`). A VM's speed drifts
 * between runs and within one (the raw HSM rate moved by half between two runs on the same machine), so two
 * separate runs, one with the store and one without, cannot show a 10 % difference; slices of one run can.
 *
 * What the second path skips is the signer's store alone: its API makes the same decisions on the same rows, and
 * its signer the same checks of its own ceilings. Not for tests.
 */
import type { ChildProcess } from 'node:child_process';
import { driveAlternating, type AlternatedResult, type DriveResult } from './closed-loop.js';
import { stopChild } from './service-bench-parts.js';

export interface StoreOffPathOptions {
  /** Starts a signer process without the store, and an API process using it; resolves with pay's loop op. */
  start: () => Promise<{ children: ChildProcess[]; payOnce: (walletId: string) => Promise<boolean>; close(): void }>;
  walletIds: readonly string[];
  concurrency: number;
}

/** The per-wallet order every phase over many wallets uses (a stride through the list). */
const spreadWallet = (walletIds: readonly string[], i: number) => walletIds[(i * 7919) % walletIds.length]!;

export interface StoreCostComparison {
  on: AlternatedResult;
  off: AlternatedResult;
  /** The store's statements that wrote spends during the comparison (only the path with the store has any). */
  store?: StoreStatements;
}

/** What the signer's store ran (pg_stat_statements): the statements writing spends and their execution ms. */
export interface StoreStatements {
  calls: number;
  ms: number;
  /** Every statement on the signer's database (the spend statements included). */
  allCalls: number;
  allMs: number;
}

/**
 * The second path, started and warmed: each of its wallets paid once through it (its signer unwraps each key), then
 * 2 s. The two paths pay disjoint halves of the wallets (the even places and the odd ones; the first and the second
 * for one hot wallet): an API remembers each wallet's spend state, and a state the other API moved since is read
 * again — measured, alternating over the same wallets made every payment of both paths cost that read.
 */
export async function startStoreOffPath(options: StoreOffPathOptions) {
  const started = await options.start();
  const { concurrency } = options;
  const onWallets = options.walletIds.filter((_, i) => i % 2 === 0);
  const offWallets = options.walletIds.filter((_, i) => i % 2 === 1);
  const warm = async () => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < offWallets.length) await started.payOnce(offWallets[next++]!);
      }),
    );
    await driveAlternating({ off: (i) => started.payOnce(spreadWallet(offWallets, i)) }, { rounds: 2, concurrency });
  };
  try {
    await warm();
  } catch (err) {
    started.close();
    for (const child of started.children) await stopChild(child);
    throw err;
  }
  return {
    /** The same warm-up again: after the wallets' policies changed, its API reads each wallet's new policy once. */
    warm,
    /**
     * Pays over each path's half of the wallets (`hot`: its first only) through `onPayOnce` (the bench's API, its
     * signer with the store) and through the second path, alternating one-second slices, `rounds` of each.
     */
    compare: async (
      onPayOnce: (walletId: string) => Promise<boolean>,
      o: {
        rounds: number;
        hot?: boolean;
        sample: () => number;
        parts?: () => Record<string, number>;
        /** The store's statement counters so far (the comparison reports their movement). */
        store?: () => Promise<StoreStatements>;
      },
    ): Promise<StoreCostComparison> => {
      const pick = (wallets: readonly string[]) =>
        o.hot ? () => wallets[0]! : (i: number) => spreadWallet(wallets, i);
      const [on, off] = [pick(onWallets), pick(offWallets)];
      const before = await o.store?.();
      const result = await driveAlternating(
        { on: (i) => onPayOnce(on(i)), off: (i) => started.payOnce(off(i)) },
        { rounds: o.rounds, concurrency, sample: o.sample, parts: o.parts },
      );
      const after = await o.store?.();
      const store =
        before && after
          ? {
              calls: after.calls - before.calls,
              ms: after.ms - before.ms,
              allCalls: after.allCalls - before.allCalls,
              allMs: after.allMs - before.allMs,
            }
          : undefined;
      return { ...result, store };
    },
    async stop(): Promise<void> {
      started.close();
      for (const child of started.children.reverse()) await stopChild(child);
    },
  };
}

/** The median of `values` and their range, as `m (lo–hi)`. */
function medianAndRange(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const m =
    sorted.length % 2
      ? sorted[(sorted.length - 1) / 2]!
      : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  return `${m.toFixed(2)} (${sorted[0]!.toFixed(2)}–${sorted[sorted.length - 1]!.toFixed(2)})`;
}

/**
 * The report's line for one comparison: the rate with the store as a ratio to the rate without, and CPU per pay;
 * each over the whole comparison, then as the median and range of its rounds' ratios (a round's two slices are
 * next to each other in time, so its ratio is the steadier figure on a drifting machine).
 */
export function storeCostLine(label: string, c: StoreCostComparison): string {
  const rate = (r: DriveResult) => r.ops / r.seconds;
  const cpu = (r: AlternatedResult) => (r.cpuSeconds / Math.max(1, r.ops)) * 1e6;
  const ratio = rate(c.on) / rate(c.off);
  const rounds = c.on.slices.map((on, i) => ({ on, off: c.off.slices[i]! }));
  const perRound = {
    rate: medianAndRange(rounds.map(({ on, off }) => on.ops / on.seconds / (off.ops / off.seconds))),
    cpu: medianAndRange(
      rounds.map(({ on, off }) => on.cpuSeconds / Math.max(1, on.ops) / (off.cpuSeconds / Math.max(1, off.ops))),
    ),
  };
  const perPay = (r: AlternatedResult, k: string) => ((r.cpuParts?.[k] ?? 0) / Math.max(1, r.ops)) * 1e6;
  const parts = Object.keys(c.on.cpuParts ?? {});
  const split =
    parts.length > 0
      ? `; by role, µs per pay with vs without: ${parts.map((k) => `${k} ${perPay(c.on, k).toFixed(0)} vs ${perPay(c.off, k).toFixed(0)}`).join(', ')}`
      : '';
  const st = c.store;
  const statements =
    st && c.on.ops > 0
      ? `; the store's spend statements: ${(c.on.ops / Math.max(1, st.calls)).toFixed(1)} pays a statement, ${((st.ms / Math.max(1, st.calls)) * 1000).toFixed(0)} µs of execution each; all its statements ${(st.allCalls / Math.max(1, c.on.ops)).toFixed(2)} a pay, ${((st.allMs / Math.max(1, c.on.ops)) * 1000).toFixed(0)} µs of execution a pay`
      : '';
  return `${label}: with the store ${rate(c.on).toFixed(0)}/s, without ${rate(c.off).toFixed(0)}/s — ${ratio.toFixed(2)}× (${((1 - ratio) * 100).toFixed(0)} % slower; goal within 10 %); the services' CPU per pay (APIs, signers, PostgreSQL) ${cpu(c.on).toFixed(0)} vs ${cpu(c.off).toFixed(0)} µs (${((cpu(c.on) / cpu(c.off) - 1) * 100).toFixed(0)} % more); per round, the rate ${perRound.rate}× and the CPU per pay ${perRound.cpu}×${split}${statements}`;
}

/** The report's lines for the comparisons made (none when the bench ran without the store). */
export function storeCostLines(
  c: Partial<Record<'spread' | 'hot' | 'signedSpread' | 'signedHot', StoreCostComparison>>,
): string[] {
  const labels = {
    spread: 'pays over a half of the wallets each, no signed policy',
    hot: 'pays on one hot wallet, no signed policy',
    signedSpread: 'pays over a half of the wallets each, owner-signed policies',
    signedHot: 'pays on one hot wallet, owner-signed policy',
  } as const;
  const lines = (Object.keys(labels) as Array<keyof typeof labels>)
    .filter((k) => c[k])
    .map((k) => `  ${storeCostLine(labels[k], c[k]!)}`);
  if (lines.length === 0) return [];
  return [
    "the signer's second check (its policy store), alternating one-second slices with a second API and signer without the store (./support/store-cost-ab.ts):",
    ...lines,
    '',
  ];
}
