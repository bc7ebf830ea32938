/**
 * The last write of the spends recorded after release (./open-spend-leases.ts) when the policy store closes at a clean
 * shutdown (./pg-owner-policy-store.ts `close`): tried again a few times, each retry further apart, all within a bound
 * that fits the `policy_store` shutdown step (5 s in signer/main.ts, the pool's end included); the spends still
 * unwritten then are logged as one error line of counts (`open_spends_lost`: spends, wallets, tries).
 *
 * Defends: a short database outage during SIGTERM dropping those spends without a word — a policy signed later does
 * not count them, and the operator now knows how many. Does not defend: the spends themselves (they are lost; the
 * signer's own ceilings still bounded them); a process killed without a clean shutdown (docs/adr/0012).
 * No metric: the metrics listener is the first thing a shutdown closes, so a counter raised here is never scraped.
 * Addresses are public, but the line carries counts only.
 */
import type { SpendRow } from './spend-statements.js';
import type { StoreLog } from './store-generation.js';

export interface FinalFlushOptions {
  /** Writes at most (the first and its retries). */
  tries: number;
  /** The n-th retry waits n × this. */
  retryMs: number;
  /** Everything ends by this many ms after the first write starts (a hung write included). */
  boundMs: number;
}

/** 3 tries (after 250 and 500 ms), within 3.5 s: under the 5 s of the `policy_store` step, leaving the pool 1.5 s. */
export const FINAL_FLUSH: FinalFlushOptions = Object.freeze({ tries: 3, retryMs: 250, boundMs: 3500 });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Undefined once `work` resolved; its error if it rejected; a timeout's if `deadline` (monotonic ms) came first. */
async function settledBy(work: Promise<unknown>, deadline: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Error>((resolve) => {
    timer = setTimeout(() => resolve(new Error('not written in time')), Math.max(0, deadline - performance.now()));
  });
  try {
    return await Promise.race([
      work.then(
        () => undefined,
        (err: unknown) => err ?? new Error('write failed'),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `flush` until it resolves, at most `options.tries` times within `options.boundMs`; `stopRetries` after each try
 * (a failed flush arms its own retry timer: this loop is the only one at close). The last error, or undefined.
 */
export async function flushBeforeClose(
  flush: () => Promise<void>,
  stopRetries: () => void,
  options: FinalFlushOptions = FINAL_FLUSH,
): Promise<{ tries: number; error: unknown }> {
  const deadline = performance.now() + options.boundMs;
  for (let tries = 1; ; tries++) {
    const error = await settledBy(flush(), deadline);
    stopRetries();
    const wait = options.retryMs * tries;
    if (error === undefined || tries >= options.tries || performance.now() + wait >= deadline) return { tries, error };
    await sleep(wait);
  }
}

/** One error line for the spends a failed last flush left unwritten (`rows`): counts only. */
export function reportLostSpends(rows: readonly SpendRow[], tries: number, error: unknown, log?: StoreLog): void {
  if (rows.length === 0) return;
  log?.error(
    {
      event: 'open_spends_lost',
      spends: rows.length,
      wallets: new Set(rows.map((r) => r[1])).size,
      tries,
      err: error instanceof Error ? error.message.slice(0, 200) : String(error),
    },
    "open_spends_lost: spends recorded after release were not written to the signer's policy store at shutdown; a policy signed later will not count them",
  );
}
