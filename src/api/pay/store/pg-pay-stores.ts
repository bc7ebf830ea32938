/**
 * The pay wing's stores on PostgreSQL (./pay-stores.ts): snapshots read with one prepared statement
 * (./pay-statements.ts SNAPSHOT_SQL) on a pooled connection; decisions written by the group-commit writer
 * (./reservation-writer.ts) or alone (./decision-write.ts's statement, prepared), or in a locked
 * transaction (../../db/wallet-transaction.ts); signatures recorded by ./signature-recorder.ts; releases by
 * ./release-reservation.ts. The writer and the recorder have connections of their own (closed by `close`).
 */
import type { Knex } from 'knex';
import { policyWindows } from '../../../../policy/policy-windows.js';
import { runStatement, withWalletTransaction, type OpeningQuery } from '../../db/wallet-transaction.js';
import { snapshotFromRows, type PaySnapshot } from '../pay-snapshot.js';
import type { PaymentAuthorization } from '../payment-authorization.js';
import { timestampFromUs, type VelocityReadOn, type VelocityReadPoint } from '../../../../policy/velocity-window.js';
import { releaseReservation, type ReleasedReservation, type ReleaseReason } from './release-reservation.js';
import { decisionWriteStatement, type DecisionWrite } from './decision-write.js';
import { isoDate, SNAPSHOT_SQL, VELOCITY_READ_ON_SQL } from './pay-statements.js';
import type { LockedDecision, PaySnapshotStore, PayWriteStore } from './pay-stores.js';
import { ReservationWriter, type WritePlace } from './reservation-writer.js';
import { SignatureRecorder, type RecordedRow } from './signature-recorder.js';
import { writeSignerDenial, type SignerDenialRow } from './signer-denial-write.js';

/** The prepared snapshot statement of a payment and of a dry run (each prepared once per connection). */
const SNAPSHOT_STATEMENT = { pay: 'treasury_pay_snapshot_v3', evaluate: 'treasury_evaluate_snapshot_v1' } as const;

/**
 * Everything a decision needs, in one statement (SNAPSHOT_SQL): the wallet and its account key reference,
 * this UTC day/week/month's running totals, the velocity window, the audit chain head, and any earlier
 * result for the Idempotency-Key. A locked transaction sends it in the round trip that takes the lock.
 */
export function snapshotQuery(walletId: string, now: Date, idempotencyKey: string | undefined): OpeningQuery {
  const windows = policyWindows(now);
  return {
    sql: SNAPSHOT_SQL,
    params: [
      isoDate(windows.dayStart),
      isoDate(windows.weekStart),
      isoDate(windows.monthStart),
      now,
      idempotencyKey ?? null,
      walletId,
    ],
  };
}

export class PgPaySnapshotStore implements PaySnapshotStore {
  constructor(private readonly knex: Knex) {}

  async read(
    walletId: string,
    now: Date,
    idempotencyKey: string | undefined,
    purpose: 'pay' | 'evaluate',
  ): Promise<PaySnapshot | undefined> {
    const query = snapshotQuery(walletId, now, idempotencyKey);
    return snapshotFromRows(await runStatement(this.knex, query.sql, [...query.params], SNAPSHOT_STATEMENT[purpose]));
  }

  async readVelocityOn(
    walletId: string,
    now: Date,
    windowSeconds: number,
    point: VelocityReadPoint,
  ): Promise<VelocityReadOn> {
    const params = [timestampFromUs(point.lastKnownUs), walletId, now, windowSeconds];
    const [row] = await runStatement<{ found: VelocityReadOn }>(
      this.knex,
      VELOCITY_READ_ON_SQL,
      params,
      'treasury_pay_velocity_read_on_v1',
    );
    return row!.found;
  }

  async walletAddress(walletId: string): Promise<{ address: string; account_id: string; network: string } | undefined> {
    const [wallet] = await runStatement<{ address: string; account_id: string; network: string }>(
      this.knex,
      'SELECT address, account_id, network FROM wallets WHERE id = ?',
      [walletId],
      'treasury_wallet_address_v2',
    );
    return wallet;
  }
}

export class PgPayWriteStore implements PayWriteStore {
  /** Decisions (reservations and denials) are written several to a statement (./reservation-writer.ts). */
  private readonly writer: ReservationWriter;
  /** Signatures are recorded several to a statement when payments arrive together (./signature-recorder.ts). */
  private readonly recorder: SignatureRecorder<PaymentAuthorization>;

  constructor(
    private readonly knex: Knex,
    hooks: {
      onDecisionBatch: (size: number) => void;
      onRecordBatch: (size: number) => void;
      onConnectionOpened: (writer: 'decision_write' | 'signature_record') => void;
      onIsolated: (outcome: { refused: number; committed: number }) => void;
    },
  ) {
    this.recorder = new SignatureRecorder<PaymentAuthorization>(knex, {
      onBatch: hooks.onRecordBatch,
      onConnectionOpened: () => hooks.onConnectionOpened('signature_record'),
    });
    this.writer = new ReservationWriter(knex, {
      onBatch: hooks.onDecisionBatch,
      onConnectionOpened: () => hooks.onConnectionOpened('decision_write'),
      onIsolated: hooks.onIsolated,
    });
  }

  get generation(): number {
    return this.writer.generation;
  }

  generationOf(lockKey: string): number {
    return this.writer.generationOf(lockKey);
  }

  place(lockKey: string): WritePlace {
    return this.writer.place(lockKey);
  }

  async writeAlone(write: DecisionWrite): Promise<void> {
    const { sql, params, name } = decisionWriteStatement([write]);
    await runStatement(this.knex, sql, params, name);
  }

  decideUnderLock<T>(
    walletId: string,
    opening: () => OpeningQuery,
    decide: (rows: Record<string, unknown>[], thenRows: Record<string, unknown>[][]) => LockedDecision<T>,
  ): Promise<T> {
    return withWalletTransaction(
      this.knex,
      walletId,
      async (tx, rows, thenRows) => {
        const { result, write } = decide(rows, thenRows);
        if (write) {
          const { sql, params, name } = decisionWriteStatement([write]);
          await tx.query(sql, params, name);
        }
        return result;
      },
      opening,
    );
  }

  record(
    authorizationId: string,
    signature: string,
    payment: PaymentAuthorization,
    at: Date,
  ): Promise<RecordedRow<PaymentAuthorization> | undefined> {
    return this.recorder.record(authorizationId, signature, payment, at);
  }

  release(reservation: ReleasedReservation, actor: string, reason: ReleaseReason, at: Date): Promise<boolean> {
    return releaseReservation(this.knex, reservation, actor, reason, at);
  }

  writeSignerDenial(row: SignerDenialRow): Promise<void> {
    return writeSignerDenial(this.knex, row);
  }

  /** Closes the connections of the decision writer and the signature recorder (call after requests drained). */
  async close(): Promise<void> {
    await Promise.all([this.writer.close(), this.recorder.close()]);
  }
}
