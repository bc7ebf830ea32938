/**
 * How much the API keeps of what grows with use: their environment variables, part of the API's one configuration
 * schema (./app-config.ts spreads them in, through ./bounds-config.ts), and the fields of `AppConfig` they become.
 * - the pay path's remembered wallet snapshots (src/api/pay/snapshot-cache.ts): at most
 *   TREASURY_PAY_SNAPSHOT_MEMORY_BYTES of them by their estimated size, least recently used forgotten first;
 * - rejected seller ledger rows (src/api/sellers/ledger/rejected-ledger-sweeper.ts): deleted once older than
 *   TREASURY_LEDGER_REJECTED_RETENTION_DAYS (their days stay counted in the revenue summary's `rejected`).
 *
 * Defends: a bound outside its range — a snapshot budget too small to hold one snapshot of a policy at its bounds,
 * or so large that memory is bounded in name only; a retention short enough to delete rows the rejected budget still
 * counts (its window is the last 24 h, TREASURY_LEDGER_MAX_REJECTED_PER_SELLER) or rows still pending a decision.
 * Does not defend: the bounds themselves (the modules named above enforce them).
 */
import { z } from 'zod';
import { envInt } from '../../shared/env-int.js';

/**
 * The remembered snapshots' default budget: ~1,600 wallets whose policy is at its bounds; for small policies the
 * count bound (10,000 snapshots, ~22 MB) binds first.
 */
export const DEFAULT_PAY_SNAPSHOT_MEMORY_BYTES = 256 * 1024 ** 2;
/** Rejected ledger rows are kept this long by default (days since they were reported). */
export const DEFAULT_LEDGER_REJECTED_RETENTION_DAYS = 30;

export const keepBoundsEnvShape = {
  /**
   * Bytes of wallet snapshots the pay path remembers between payments, by each snapshot's estimated size (its
   * policy's the most); past it the least recently used is forgotten (its next payment reads the wallet again).
   */
  TREASURY_PAY_SNAPSHOT_MEMORY_BYTES: envInt(1024 ** 2, 16 * 1024 ** 3, DEFAULT_PAY_SNAPSHOT_MEMORY_BYTES),
  /**
   * Days a rejected ledger row is kept after it was reported; older ones are deleted in the background, in
   * bounded batches. At least 2: the rejected budget counts the last 24 h.
   */
  TREASURY_LEDGER_REJECTED_RETENTION_DAYS: envInt(2, 3_650, DEFAULT_LEDGER_REJECTED_RETENTION_DAYS),
};

type KeepBoundsEnv = { [K in keyof typeof keepBoundsEnvShape]: z.infer<(typeof keepBoundsEnvShape)[K]> };

export type KeepBoundsConfig = Readonly<{
  /** TREASURY_PAY_SNAPSHOT_MEMORY_BYTES (src/api/pay/snapshot-cache.ts). */
  paySnapshotMemoryBytes: number;
  /** TREASURY_LEDGER_REJECTED_RETENTION_DAYS (src/api/sellers/ledger/rejected-ledger-sweeper.ts). */
  ledgerRejectedRetentionDays: number;
}>;

export function keepBoundsConfigOf(e: KeepBoundsEnv): KeepBoundsConfig {
  return {
    paySnapshotMemoryBytes: e.TREASURY_PAY_SNAPSHOT_MEMORY_BYTES,
    ledgerRejectedRetentionDays: e.TREASURY_LEDGER_REJECTED_RETENTION_DAYS,
  };
}
