/**
 * The retention of rejected ledger rows: reports the platform could not match (made-up or unknown transactions,
 * a recipient the seller never proved) end `rejected` and stay, for the seller to see and for the rejected budget
 * to count (its window is the last 24 h: ./ledger-pending-cap.ts) — until they are older than
 * TREASURY_LEDGER_REJECTED_RETENTION_DAYS (30 by default) counted from when they were reported; then the API
 * deletes them in the background (src/api/main.ts, every 10 minutes; every API process may run it), in batches of
 * `batch` rows, at most `rounds` batches a run (../store/pg-rejected-ledger-retention.ts). Each batch deleted is
 * counted in `treasury_ledger_rejected_deleted_total`.
 *
 * Defends: rejected rows filling the shared database forever (the rejected budget bounds what a seller adds a day,
 * not what it keeps); a sweep holding locks or a connection for long (bounded batches, one short transaction
 * each); the revenue summary's rejected counts of whole days changing as rows go (the store keeps the rollup).
 * Does not defend: a backlog larger than `batch` × `rounds` rows a run (it takes more runs); a rejected row older than
 * the retention can no longer be reopened by a pay-to proof, and its transaction may be reported again (as new).
 */
import type { Knex } from 'knex';
import { startRepeatingTask, type RepeatingTask } from '../../../../base/repeating-task.js';
import type { KeepBoundsConfig } from '../../config/keep-bounds-config.js';
import { describeError } from '../../log/describe-error.js';
import type { Logger } from '../../log/logger.js';
import type { TreasuryMetrics } from '../../metrics/treasury-metrics.js';
import { deleteRejectedBefore } from '../store/pg-rejected-ledger-retention.js';

const DAY_MS = 86_400_000;

export interface RejectedLedgerSweepOptions {
  /** TREASURY_LEDGER_REJECTED_RETENTION_DAYS: rows reported longer ago than this are deleted. */
  retentionDays: number;
  /** Rows deleted per batch (one transaction). */
  batch: number;
  /** Batches per run at most. */
  rounds: number;
}

const DEFAULTS = { batch: 1_000, rounds: 20 };

/** How often the API runs the sweep (`startRejectedLedgerSweep`). */
const SWEEP_EVERY_MS = 10 * 60 * 1_000;

export interface RejectedLedgerSweepDeps {
  /** Deletes at most `limit` rejected rows created before `cutoff` (../store/pg-rejected-ledger-retention.ts). */
  deleteBatch: (cutoff: Date, limit: number) => Promise<number>;
  clock: () => Date;
  /** Counts rows deleted (the metric). */
  counted: (rows: number) => void;
}

/** A bounded whole number, or a RangeError naming it (the configuration bounds these already). */
function bounded(name: string, value: number, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new RangeError(`${name}: a whole number from ${min} to ${max}`);
  return value;
}

export class RejectedLedgerSweeper {
  private readonly options: RejectedLedgerSweepOptions;

  constructor(
    private readonly deps: RejectedLedgerSweepDeps,
    options: Pick<RejectedLedgerSweepOptions, 'retentionDays'> & Partial<RejectedLedgerSweepOptions>,
  ) {
    const o = { ...DEFAULTS, ...options };
    this.options = {
      retentionDays: bounded('retentionDays', o.retentionDays, 2, 3_650),
      batch: bounded('batch', o.batch, 1, 10_000),
      rounds: bounded('rounds', o.rounds, 1, 1_000),
    };
  }

  /** The reporting time before which a rejected row is deleted, at `now`. */
  cutoffAt(now: Date): Date {
    return new Date(now.getTime() - this.options.retentionDays * DAY_MS);
  }

  /** One run: batches until one comes back short or `rounds` were taken; rejects when a batch fails. */
  async sweep(): Promise<{ deleted: number }> {
    const { batch, rounds } = this.options;
    const cutoff = this.cutoffAt(this.deps.clock());
    let deleted = 0;
    for (let round = 0; round < rounds; round++) {
      const rows = await this.deps.deleteBatch(cutoff, batch);
      if (rows > 0) this.deps.counted(rows);
      deleted += rows;
      if (rows < batch) break;
    }
    return { deleted };
  }
}

/** The sweeper over PostgreSQL, counted in `treasury_ledger_rejected_deleted_total`. */
export function rejectedLedgerSweeper(
  knex: Knex,
  metrics: Pick<TreasuryMetrics, 'ledgerRejectedDeleted'>,
  options: Pick<RejectedLedgerSweepOptions, 'retentionDays'> & Partial<RejectedLedgerSweepOptions>,
  clock: () => Date = () => new Date(),
): RejectedLedgerSweeper {
  return new RejectedLedgerSweeper(
    {
      deleteBatch: (cutoff, limit) => deleteRejectedBefore(knex, cutoff, limit),
      clock,
      counted: (rows) => metrics.ledgerRejectedDeleted.inc(rows),
    },
    options,
  );
}

/**
 * The API's background loop (src/api/main.ts): a sweep now and 10 minutes after each run ends; a closeable, so the
 * ordered shutdown waits for a run in flight before the pool is destroyed. A run that deleted rows logs how many; a
 * failed one logs the error (never a bind value) and the loop goes on.
 */
export function startRejectedLedgerSweep(
  knex: Knex,
  metrics: Pick<TreasuryMetrics, 'ledgerRejectedDeleted'>,
  config: Pick<KeepBoundsConfig, 'ledgerRejectedRetentionDays'>,
  log: Logger,
): RepeatingTask {
  const sweeper = rejectedLedgerSweeper(knex, metrics, { retentionDays: config.ledgerRejectedRetentionDays });
  return startRepeatingTask({
    name: 'rejected_ledger_sweeper',
    everyMs: SWEEP_EVERY_MS,
    run: () =>
      sweeper.sweep().then(
        (r) => r.deleted > 0 && log.info(r, 'deleted rejected ledger rows past their retention'),
        (err: unknown) => log.warn({ err: describeError(err) }, 'rejected ledger sweep failed; retried in 10 minutes'),
      ),
  });
}
