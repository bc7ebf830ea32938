/**
 * The background sweep of the `payment-identifier` store (../store/pg-payment-id-store.ts): deletes every seller's
 * expired rows (pending claims past their TTL, answers past the 24 h retention), so they leave the database — and
 * the seller's budgets — whether or not the seller writes again. Run by the API every minute
 * (src/api/app.ts); every API process may run it (each seller's rows are deleted under its lock).
 *
 * One run takes rounds: the sellers among the `scan` rows that expired first (an index on expires_at), then, per
 * seller, up to `perSeller` of its expired rows in one short transaction; at most `rounds` rounds, the rest waits for
 * the next run. A seller whose sweep fails is skipped for the run and logged (its rows are found again next time);
 * the others go on.
 *
 * Defends: expired rows living until their seller happens to write again (one seller's abandoned ids holding disk);
 * one failing seller (a lock held too long) blocking every other's sweep; a sweep holding a lock or a connection for
 * long (bounded batches). Does not defend: a backlog larger than `rounds` × `scan` rows per run (it takes more runs).
 */
import type { Logger } from 'pino';
import { describeError } from '../../log/describe-error.js';
import type { PgPaymentIdStore } from '../store/pg-payment-id-store.js';

export interface PaymentIdSweepOptions {
  /** Expired rows read per round to find the sellers to sweep. */
  scan: number;
  /** Expired rows of one seller deleted per round. */
  perSeller: number;
  /** Rounds per run at most. */
  rounds: number;
}

const DEFAULTS: PaymentIdSweepOptions = { scan: 1_000, perSeller: 500, rounds: 20 };

export interface PaymentIdSweepResult {
  deleted: number;
  /** Sellers whose sweep failed in this run. */
  failed: number;
}

export class PaymentIdSweeper {
  private readonly options: PaymentIdSweepOptions;

  constructor(
    private readonly deps: {
      store: Pick<PgPaymentIdStore, 'expiredSellers' | 'sweepSeller'>;
      clock: () => Date;
      log: Logger;
    },
    options: Partial<PaymentIdSweepOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** One run; rejects only when the expired rows cannot be read at all. */
  async sweep(): Promise<PaymentIdSweepResult> {
    const { store, clock, log } = this.deps;
    const { scan, perSeller, rounds } = this.options;
    const result: PaymentIdSweepResult = { deleted: 0, failed: 0 };
    const failedSellers = new Set<string>();
    for (let round = 0; round < rounds; round++) {
      const now = clock();
      const sellers = await store.expiredSellers(now, scan, [...failedSellers]);
      if (sellers.length === 0) break;
      let deletedThisRound = 0;
      for (const sellerId of sellers) {
        try {
          deletedThisRound += await store.sweepSeller(sellerId, now, perSeller);
        } catch (err) {
          failedSellers.add(sellerId);
          result.failed += 1;
          log.warn(
            { seller_id: sellerId, err: describeError(err) },
            'payment-identifier sweep of a seller failed; retried at the next run',
          );
        }
      }
      result.deleted += deletedThisRound;
      if (deletedThisRound === 0) break;
    }
    return result;
  }
}
