/**
 * Releases reservations nobody will sign any more: a process that stopped between reserving and recording
 * (killed, crashed, its own releases lost with it) leaves its reservations counted in the wallet's windows.
 * Once such an authorization has expired — its `valid_before` more than `graceSeconds` in the past — no
 * signature of it, had one been made, can move funds (the token refuses it), so its spend is given back
 * (`payment.released`, reason `expired_unsigned`; ./store/release-reservation.ts). A Solana payment has no
 * `validBefore` the chain enforces: its `valid_before` is the x402 timeout, while its transaction can land until its
 * blockhash expires (about 150 slots, a minute or more after the block it was read at, which may be up to the
 * reuse age before the payment: ./solana/recent-blockhash.ts). So a Solana reservation waits
 * `SOLANA_LANDING_SECONDS` more.
 *
 * Defends: caps eaten by payments that never happened; one reservation whose release fails holding back the
 * others (each row on its own; the failed ones are read again, and the sweep reports them: SweepIncompleteError); this process deciding the wallet's next payment on what
 * it remembered from before the release (`onReleased`: the pay path forgets it). Every API process may sweep:
 * the release acts only on a row still `reserved`, under the wallet's lock. Each sweep reads the authorizations
 * that expired since the previous one (a BRIN index on valid_before keeps that to the newest block ranges); the
 * first sweep of a process looks back `lookbackSeconds`.
 * Does not defend: reservations that expired before a process's first look-back (an API stopped for longer
 * than that): docs/runbooks/database-unavailable.md lists them. A Solana chain that stops producing blocks keeps
 * a blockhash valid past `SOLANA_LANDING_SECONDS` (its lifetime is counted in blocks, not seconds): a reservation
 * swept meanwhile whose transaction was signed could still land when the chain resumes.
 */
import type { Knex } from 'knex';
import { formatUsd } from '../../../policy/money.js';
import { policyWindows } from '../../../policy/policy-windows.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import { releaseReservation } from './store/release-reservation.js';

export interface ExpiredReservationSweeperOptions {
  /** After valid_before, how long a reservation still waits (clock skew between this host and the chain). */
  graceSeconds?: number;
  /** How far back the first sweep of a process looks. */
  lookbackSeconds?: number;
  /** Reservations released per sweep at most; the rest wait for the next sweep. */
  batch?: number;
  /**
   * Called after each release, with the wallet and the actor that reserved it (a buyer PAT's id, when one did):
   * the release moved the wallet's audit chain and totals, and the PAT's day, past what the pay path remembers.
   */
  onReleased?: (walletId: string, actor: string) => void;
  /** Test seam: how one reservation is released. */
  release?: typeof releaseReservation;
}

/** A sweep that released what it could and failed on some rows: they are read again next time. */
export class SweepIncompleteError extends Error {
  constructor(
    readonly released: number,
    readonly failed: number,
    readonly firstError: unknown,
  ) {
    super(`expired reservation sweep: ${failed} release(s) failed, ${released} released; the failed are read again`);
    this.name = 'SweepIncompleteError';
  }
}

interface ExpiredRow {
  id: string;
  wallet_id: string;
  decision_id: string;
  amount_micro: string;
  nonce: string;
  actor: string;
  created_at: Date;
  valid_before: string;
}

export const SWEEPER_ACTOR = 'treasury-sweeper';

/**
 * How much longer than `graceSeconds` a Solana reservation waits past its `valid_before`: a blockhash's 150 slots
 * (60–90 s at 400–600 ms a slot) from a block read at most a few seconds before the payment, with room to spare —
 * its `valid_before` is at least six seconds ahead of the payment (./authorization-terms.ts).
 */
export const SOLANA_LANDING_SECONDS = 120;

export class ExpiredReservationSweeper {
  private sweptUpTo: number | undefined;
  private readonly graceSeconds: number;
  private readonly lookbackSeconds: number;
  private readonly batch: number;
  private readonly onReleased: (walletId: string, actor: string) => void;
  private readonly release: typeof releaseReservation;

  constructor(
    private readonly knex: Knex,
    private readonly metrics: TreasuryMetrics,
    private readonly clock: () => Date,
    options: ExpiredReservationSweeperOptions = {},
  ) {
    this.graceSeconds = options.graceSeconds ?? 60;
    this.lookbackSeconds = options.lookbackSeconds ?? 7 * 86_400;
    this.batch = options.batch ?? 500;
    this.onReleased = options.onReleased ?? (() => undefined);
    this.release = options.release ?? releaseReservation;
  }

  /** One sweep: releases what expired since the last one; answers how many reservations it released. */
  async sweep(): Promise<number> {
    const stop = this.metrics.dbTransactionDuration.startTimer({ operation: 'expired_reservation_sweep' });
    try {
      return await this.sweepOnce();
    } finally {
      stop();
    }
  }

  private async sweepOnce(): Promise<number> {
    const cutoff = Math.floor(this.clock().getTime() / 1000) - this.graceSeconds;
    // Solana rows expire later; the range swept up to is theirs, so an EVM row past it may be read again (by then
    // it is no longer `reserved`, and a release acts only on a row still reserved).
    const solanaCutoff = cutoff - SOLANA_LANDING_SECONDS;
    const from = this.sweptUpTo ?? solanaCutoff - this.lookbackSeconds;
    if (cutoff <= from) return 0;
    const rows = (
      await this.knex.raw(
        `SELECT id, wallet_id, decision_id, amount_micro, nonce, actor, created_at, valid_before FROM authorizations
        WHERE valid_before > ? AND valid_before <= ? AND status = 'reserved'
          AND (network NOT LIKE 'solana:%' OR valid_before <= ?)
        ORDER BY valid_before LIMIT ?`,
        [from, cutoff, solanaCutoff, this.batch],
      )
    ).rows as ExpiredRow[];
    let released = 0;
    let failed = 0;
    let firstError: unknown;
    for (const row of rows) {
      const amountMicro = BigInt(row.amount_micro);
      // One row's failure (a lock time-out on a busy wallet) does not keep the rows after it, other tenants', held.
      const done = await this.release(
        this.knex,
        {
          walletId: row.wallet_id,
          authorizationId: row.id,
          decisionId: row.decision_id,
          amountMicro,
          amountUsd: formatUsd(amountMicro),
          nonce: row.nonce,
          windows: policyWindows(row.created_at),
          // A buyer PAT's daily total counted it if a PAT reserved it (the actor is then the PAT's id).
          patTokenId: row.actor,
        },
        SWEEPER_ACTOR,
        'expired_unsigned',
        this.clock(),
      ).catch((err: unknown) => {
        failed++;
        firstError ??= err;
        return false;
      });
      if (done) {
        released++;
        this.onReleased(row.wallet_id, row.actor);
        this.metrics.payDecisions.inc({ kind: 'pay', outcome: 'expired_released' });
      }
    }
    // A full batch may have left some, and a failed row is still reserved: the same range is read again next time
    // (released rows no longer match).
    if (rows.length < this.batch && failed === 0) this.sweptUpTo = solanaCutoff;
    if (failed > 0) throw new SweepIncompleteError(released, failed, firstError);
    return released;
  }
}
