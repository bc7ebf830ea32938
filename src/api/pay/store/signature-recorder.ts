/**
 * Records signatures on their reserved authorization rows, several in one statement when payments arrive
 * together (./group-commit-queue.ts): a record is sent at once when no statement is running, otherwise it
 * joins the next statement. An idle service pays no added latency; a busy one sends one
 * `UPDATE … FROM jsonb_to_recordset(…)` (prepared, fixed parameters) for many signatures instead of one each.
 *
 * Defends: the pay path's rule that a signature leaves only after its row is committed — each caller's
 * promise resolves only after the statement holding its row committed (autocommit), with what the row
 * holds then; only a `reserved` row takes a signature (a released or already signed row is read back as
 * it is, never overwritten). A failed statement fails every record in it (callers do not release a
 * signature they could not record); one whose connection dropped is sent once more on a new connection.
 * Does not defend: a process that dies between signing and recording — the reservation stays counted
 * as spent and unsigned until it expires (../expired-reservation-sweeper.ts).
 */
import type { Knex } from 'knex';
import { GroupCommitQueue } from './group-commit-queue.js';
import { jsonRowsEncoder, recordsetColumns } from './json-rows.js';
import { StatementConnection } from './statement-connection.js';
import { connectionUsableAfter } from '../../db/connection-usable-after.js';

export interface RecordedRow<R> {
  status: string;
  response: R;
}

interface Pending<R> {
  id: string;
  signature: string;
  /** What the row's response becomes; its JSON is what the statement writes. */
  value: R;
  response: string;
  at: Date;
  resolve(row: RecordedRow<R> | undefined): void;
  reject(err: unknown): void;
}

// `a.id = ANY(…)` pins the plan to primary-key lookups: a prepared statement's generic plan guesses 100 rows
// for the recordset and, once the table holds some thousands of rows, prefers a hash join over a sequential
// scan of all authorizations — measured at two thirds of a core under a steady 400 payments/s.
const RECORD_COLUMNS = ['id', 'signature', 'response', 'signed_at'];
const RECORD_TYPES = ['text', 'text', 'jsonb', 'timestamptz'];
export const SIGNATURE_RECORD_SQL = `UPDATE authorizations a SET status = 'signed', signature = v.signature, response = v.response, signed_at = v.signed_at
  FROM jsonb_to_recordset(?::jsonb) AS v(${recordsetColumns(RECORD_COLUMNS, RECORD_TYPES)})
 WHERE a.id = ANY(?::text[]) AND a.id = v.id AND a.status = 'reserved'
 RETURNING a.id`;
const recordRows = jsonRowsEncoder(RECORD_COLUMNS, RECORD_TYPES);
const READ_SQL = 'SELECT id, status, response FROM authorizations WHERE id = ANY(?::text[])';

export class SignatureRecorder<R> {
  private readonly queue: GroupCommitQueue<Pending<R>>;
  private readonly connection: StatementConnection;

  constructor(
    knex: Knex,
    options: { maxBatch?: number; onBatch?: (size: number) => void; onConnectionOpened?: () => void } = {},
  ) {
    this.connection = new StatementConnection(knex, { onOpen: options.onConnectionOpened });
    this.queue = new GroupCommitQueue((batch) => this.flush(batch), options);
  }

  /** Closes the recorder's connection (./statement-connection.ts); later records fail. */
  close(): Promise<void> {
    return this.connection.close();
  }

  /** Resolves with the row as committed (`signed` with this or an earlier signature), undefined if the row is gone. */
  record(id: string, signature: string, response: R, at: Date): Promise<RecordedRow<R> | undefined> {
    return new Promise((resolve, reject) =>
      this.queue.push({ id, signature, value: response, response: JSON.stringify(response), at, resolve, reject }),
    );
  }

  private async flush(batch: Pending<R>[]): Promise<() => void> {
    try {
      return await this.flushOnce(batch);
    } catch (err) {
      if (connectionUsableAfter(err)) return () => batch.forEach((p) => p.reject(err));
      // The connection dropped (restart, failover, pg_terminate_backend): once more on a new one. Safe whether
      // or not the first statement committed — a row that already took a signature is read back as it is.
      try {
        return await this.flushOnce(batch);
      } catch (again) {
        return () => batch.forEach((p) => p.reject(again));
      }
    }
  }

  /** One record statement (and the read-back of rows that took no signature from it); throws if either fails. */
  private async flushOnce(batch: Pending<R>[]): Promise<() => void> {
    const taken = await this.connection.query<{ id: string }>(
      SIGNATURE_RECORD_SQL,
      [recordRows(batch.map((p) => [p.id, p.signature, p.response, p.at])), batch.map((p) => p.id)],
      'treasury_pay_sign_record_batch_v4',
    );
    // A row that took a signature holds what was sent for it, so only its id comes back — unless two records
    // of one row shared the statement (concurrent retries of one Idempotency-Key): then only one signature
    // was stored, and which one is read back, like every row that took none (recorded first, or released).
    const seen = new Map<string, number>();
    for (const p of batch) seen.set(p.id, (seen.get(p.id) ?? 0) + 1);
    const pending = new Map(batch.map((p) => [p.id, p]));
    const byId = new Map<string, { status: string; response: R }>();
    for (const { id } of taken) {
      if (seen.get(id) === 1) byId.set(id, { status: 'signed', response: pending.get(id)!.value });
    }
    const missing = [...new Set(batch.filter((p) => !byId.has(p.id)).map((p) => p.id))];
    if (missing.length > 0) {
      for (const r of await this.connection.query<{ id: string; status: string; response: R }>(
        READ_SQL,
        [missing],
        'treasury_pay_sign_read_batch_v1',
      ))
        byId.set(r.id, r);
    }
    return () => {
      for (const p of batch) {
        const row = byId.get(p.id);
        p.resolve(row ? { status: row.status, response: row.response } : undefined);
      }
    };
  }
}
