/**
 * PostgreSQL rows of sellers' x402 `payment-identifier` ids (table seller_payment_ids, migration
 * 20261130100000): claim, complete, release, each one statement on the primary key (seller_id, route,
 * payment_id), so two gate processes or replicas claiming one id at once cannot both win — the INSERT … ON
 * CONFLICT decides. An expired row (a pending claim past its TTL, an answer past retention) is taken over by
 * the next claim; `sweep` deletes a bounded batch of a seller's expired rows.
 *
 * Defends against: one id paid twice across processes; a seller's claim touching another seller's rows
 * (every statement names seller_id). Does not defend against: a seller filling the table with its own ids
 * (they expire; the sweep removes them).
 */
import type { Knex } from 'knex';
import type { PaymentIdBeginReply, StoredAnswer } from '../../../shared/payment-identifier-wire.js';

export interface PaymentIdRowKey {
  sellerId: string;
  route: string;
  id: string;
  fingerprint: string;
}

interface Row {
  fingerprint: string;
  state: 'pending' | 'done';
  answer: StoredAnswer | null;
  expires_at: Date;
}

export class PgPaymentIdStore {
  constructor(private readonly knex: Knex) {}

  private where(k: PaymentIdRowKey) {
    return { seller_id: k.sellerId, route: k.route, payment_id: k.id };
  }

  /** Claims the key for `fingerprint` until `until`, or says who holds it. */
  async begin(k: PaymentIdRowKey, now: Date, until: Date): Promise<PaymentIdBeginReply> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const claimed = await this.knex.raw(
        `INSERT INTO seller_payment_ids (seller_id, route, payment_id, fingerprint, state, answer, created_at, expires_at)
         VALUES (?, ?, ?, ?, 'pending', NULL, ?, ?)
         ON CONFLICT (seller_id, route, payment_id) DO UPDATE
           SET fingerprint = EXCLUDED.fingerprint, state = 'pending', answer = NULL,
               created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
           WHERE seller_payment_ids.expires_at <= EXCLUDED.created_at
         RETURNING 1`,
        [k.sellerId, k.route, k.id, k.fingerprint, now, until],
      );
      if (claimed.rows.length > 0) return { outcome: 'new' };
      const row = (await this.knex('seller_payment_ids')
        .where(this.where(k))
        .first('fingerprint', 'state', 'answer', 'expires_at')) as Row | undefined;
      if (!row || row.expires_at <= now) continue; // released or expired in between: claim again
      if (row.fingerprint !== k.fingerprint) return { outcome: 'conflict' };
      if (row.state === 'pending' || !row.answer) return { outcome: 'in_flight' };
      return { outcome: 'stored', answer: row.answer };
    }
    return { outcome: 'in_flight' };
  }

  /** The pending claim of `fingerprint` becomes its answer, kept until `until`; false when it is not pending. */
  async complete(k: PaymentIdRowKey, answer: StoredAnswer, until: Date): Promise<boolean> {
    const updated = await this.knex('seller_payment_ids')
      .where({ ...this.where(k), fingerprint: k.fingerprint, state: 'pending' })
      .update({ state: 'done', answer: JSON.stringify(answer), expires_at: until });
    return updated > 0;
  }

  /** Drops the pending claim of `fingerprint`; false when there is none. */
  async release(k: PaymentIdRowKey): Promise<boolean> {
    const deleted = await this.knex('seller_payment_ids')
      .where({ ...this.where(k), fingerprint: k.fingerprint, state: 'pending' })
      .delete();
    return deleted > 0;
  }

  /** Deletes up to `limit` of the seller's expired rows. */
  async sweep(sellerId: string, now: Date, limit: number): Promise<number> {
    const result = await this.knex.raw(
      `DELETE FROM seller_payment_ids WHERE ctid IN (
         SELECT ctid FROM seller_payment_ids WHERE seller_id = ? AND expires_at <= ? LIMIT ?)`,
      [sellerId, now, limit],
    );
    return result.rowCount ?? 0;
  }
}
