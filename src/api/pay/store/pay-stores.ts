/**
 * The two stores the pay wing reads and writes through, so that its orchestration (../reserve-payment.ts)
 * reads as steps and its unit tests can run on fakes (test/support/fake-pay-stores.ts):
 * - `PaySnapshotStore`: where a wallet's snapshot is read from (one prepared statement, no lock);
 * - `PayWriteStore`: where decisions, signatures and releases are written — the group-commit writer's
 *   places, a decision written alone, a decision taken and written under the wallet's and the PAT's locks,
 *   the signature record, and the release of a reservation whose signature never left.
 * PostgreSQL implementations: ./pg-pay-stores.ts. What the process remembers between payments is not a
 * store but memory (../snapshot-cache.ts).
 */
import type { OpeningQuery } from '../../db/wallet-transaction.js';
import type { PaySnapshot } from '../pay-snapshot.js';
import type { PaymentAuthorization } from '../payment-authorization.js';
import type { VelocityReadOn, VelocityReadPoint } from '../../../../policy/velocity-window.js';
import type { ReleasedReservation, ReleaseReason } from './release-reservation.js';
import type { DecisionWrite } from './decision-write.js';
import type { WritePlace } from './reservation-writer.js';
import type { RecordedRow } from './signature-recorder.js';
import type { SignerDenialRow } from './signer-denial-write.js';

export interface PaySnapshotStore {
  /**
   * The wallet's snapshot at `now` with any earlier attempt under `idempotencyKey`, read in one prepared
   * statement (`purpose` names it: a payment's read or a dry run's); undefined when there is no such wallet.
   */
  read(
    walletId: string,
    now: Date,
    idempotencyKey: string | undefined,
    purpose: 'pay' | 'evaluate',
  ): Promise<PaySnapshot | undefined>;
  /**
   * A remembered velocity window read on from `point` at `now` (policy/velocity-window.ts): what
   * VELOCITY_READ_ON_SQL finds for the wallet and its window of `windowSeconds`.
   */
  readVelocityOn(walletId: string, now: Date, windowSeconds: number, point: VelocityReadPoint): Promise<VelocityReadOn>;
  /** The wallet's address and account, read without a lock (the Permit2 allowance is read for it). */
  walletAddress(walletId: string): Promise<{ address: string; account_id: string; network: string } | undefined>;
}

/** What a decision taken under the locks (PayWriteStore.decideUnderLock) leaves to write, and what it returns. */
export interface LockedDecision<T> {
  result: T;
  write?: DecisionWrite | undefined;
}

export interface PayWriteStore {
  /** Moves on each time a shared statement failed as a whole: anything remembered under an older one may be wrong. */
  readonly generation: number;
  /** The generation of the wallet with `lockKey` (a refused write of it moves it on too). */
  generationOf(lockKey: string): number;
  /** A decision's place in the group-commit queue, filled once its write exists (../store/reservation-writer.ts). */
  place(lockKey: string): WritePlace;
  /** One decision in a statement of its own (autocommit), after the wallet's queued writes. */
  writeAlone(write: DecisionWrite): Promise<void>;
  /**
   * In one transaction under the wallet's exclusive lock (and whatever `opening` locks after it): the opening
   * round trip's rows go to `decide`, its write is written, and the transaction commits. `opening` is built
   * when the wallet's turn has come.
   */
  decideUnderLock<T>(
    walletId: string,
    opening: () => OpeningQuery,
    decide: (rows: Record<string, unknown>[], thenRows: Record<string, unknown>[][]) => LockedDecision<T>,
  ): Promise<T>;
  /** Records `signature` on a reserved authorization (several to a statement); the row as it stands after. */
  record(
    authorizationId: string,
    signature: string,
    payment: PaymentAuthorization,
    at: Date,
  ): Promise<RecordedRow<PaymentAuthorization> | undefined>;
  /** Releases a reservation whose signature never left (spend given back, audited); false when it was not reserved. */
  release(reservation: ReleasedReservation, actor: string, reason: ReleaseReason, at: Date): Promise<boolean>;
  /** A payment the signer's owner-signed policy refused: its `pd_…` decision and audit row (./signer-denial-write.ts). */
  writeSignerDenial(row: SignerDenialRow): Promise<void>;
  close(): Promise<void>;
}
