/**
 * In-memory fakes of the pay wing's two stores (src/api/pay/store/pay-stores.ts), for unit tests of its
 * orchestration without PostgreSQL: a snapshot store that answers the snapshots a test sets and counts its
 * reads; a write store whose group-commit places commit when filled (or are refused, as a failed shared
 * statement refuses them), and that keeps what was written, recorded and released. Never imported by
 * production code.
 */
import type { OpeningQuery } from '../../src/api/db/wallet-transaction.js';
import type { PaySnapshot } from '../../src/api/pay/pay-snapshot.js';
import type { PaymentAuthorization } from '../../src/api/pay/payment-authorization.js';
import { VELOCITY_TIMES_KEPT, type VelocityReadOn, type VelocityReadPoint } from '../../policy/velocity-window.js';
import type { ReleasedReservation, ReleaseReason } from '../../src/api/pay/store/release-reservation.js';
import type { DecisionWrite } from '../../src/api/pay/store/decision-write.js';
import type { LockedDecision, PaySnapshotStore, PayWriteStore } from '../../src/api/pay/store/pay-stores.js';
import { ReservationBatchAborted, type WritePlace } from '../../src/api/pay/store/reservation-writer.js';
import type { RecordedRow } from '../../src/api/pay/store/signature-recorder.js';
import type { SignerDenialRow } from '../../src/api/pay/store/signer-denial-write.js';

export class FakePaySnapshotStore implements PaySnapshotStore {
  /** What a read of each wallet returns. */
  readonly wallets = new Map<string, PaySnapshot>();
  reads = 0;
  /** Each wallet's payment times in µs (not released), which a velocity window is read on from; and the reads on. */
  readonly paymentTimesUs = new Map<string, number[]>();
  readsOn = 0;

  async read(walletId: string): Promise<PaySnapshot | undefined> {
    this.reads++;
    return this.wallets.get(walletId);
  }

  /** What VELOCITY_READ_ON_SQL finds, over `paymentTimesUs`. */
  async readVelocityOn(
    walletId: string,
    now: Date,
    windowSeconds: number,
    point: VelocityReadPoint,
  ): Promise<VelocityReadOn> {
    this.readsOn++;
    const startUs = now.getTime() * 1000 - windowSeconds * 1_000_000;
    const times = [...(this.paymentTimesUs.get(walletId) ?? [])].sort((a, b) => a - b);
    const oldest_us = times.filter((t) => t > startUs).slice(0, VELOCITY_TIMES_KEPT);
    const full = oldest_us.length === VELOCITY_TIMES_KEPT;
    return { left: full ? times.filter((t) => t >= point.lastKnownUs && t <= startUs).length : 0, oldest_us };
  }

  async walletAddress(walletId: string): Promise<{ address: string; account_id: string; network: string } | undefined> {
    const s = this.wallets.get(walletId);
    return s && { address: s.wallet.address, account_id: s.wallet.account_id, network: s.wallet.network };
  }
}

export class FakePayWriteStore implements PayWriteStore {
  generation = 0;
  /** Writes committed through a place, in order. */
  readonly committed: DecisionWrite[] = [];
  /** Writes written alone. */
  readonly alone: DecisionWrite[] = [];
  readonly recorded: Array<{ authorizationId: string; signature: string }> = [];
  readonly released: Array<{ reservation: ReleasedReservation; reason: ReleaseReason }> = [];
  /** The cause the next filled place is refused with (as a failed shared statement refuses its writes), once. */
  refuseNext: unknown = undefined;

  generationOf(): number {
    return this.generation;
  }

  place(): WritePlace {
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const committed = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    committed.catch(() => undefined);
    return {
      committed,
      fill: (write) => {
        if (this.refuseNext !== undefined) {
          const cause = this.refuseNext;
          this.refuseNext = undefined;
          this.generation++;
          reject(new ReservationBatchAborted(cause));
          return;
        }
        this.committed.push(write);
        resolve();
      },
    };
  }

  async writeAlone(write: DecisionWrite): Promise<void> {
    this.alone.push(write);
  }

  async decideUnderLock<T>(
    _walletId: string,
    _opening: () => OpeningQuery,
    _decide: (rows: Record<string, unknown>[], thenRows: Record<string, unknown>[][]) => LockedDecision<T>,
  ): Promise<T> {
    throw new Error(
      'the fake write store has no locked transactions (a capped buyer PAT reads its total under the PAT lock)',
    );
  }

  async record(
    authorizationId: string,
    signature: string,
    payment: PaymentAuthorization,
  ): Promise<RecordedRow<PaymentAuthorization> | undefined> {
    this.recorded.push({ authorizationId, signature });
    return { status: 'signed', response: { ...payment, signature } };
  }

  async release(reservation: ReleasedReservation, _actor: string, reason: ReleaseReason): Promise<boolean> {
    this.released.push({ reservation, reason });
    return true;
  }

  /** The signer's refusals written, in order. */
  readonly signerDenials: SignerDenialRow[] = [];

  async writeSignerDenial(row: SignerDenialRow): Promise<void> {
    this.signerDenials.push(row);
  }

  async close(): Promise<void> {}
}
