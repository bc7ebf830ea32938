/**
 * PostgreSQL rows of sellers' x402 `payment-identifier` ids (table seller_payment_ids, migration
 * 20261130100000): claim, complete, release, sweep. Every write to a seller's rows runs in a transaction holding
 * that seller's advisory lock (SHA-256("payment_ids:" + seller id)), so the seller's running totals — its rows and
 * bytes of stored answers, kept by triggers in seller_payment_id_totals (migration 20261202103100) — are read and
 * moved by one writer at a time: a claim of a new id is refused at `maxIds` rows, an answer that would pass
 * `maxAnswerBytes` is kept without its body or not at all. A write at a budget first sweeps a bounded batch of the
 * seller's expired rows (a pending claim past its TTL, an answer past retention), so expiry frees the budget
 * without waiting for the background sweep (`expiredSellers` + `sweepSeller`, ../payment-ids/payment-id-sweeper.ts).
 * An expired row is taken over by the next claim of its key.
 *
 * Defends against: one id paid twice across processes (one writer per seller; the key is the primary key);
 * a seller's claim touching another seller's rows (every statement names seller_id); one seller filling the
 * shared database with ids or answers (the budgets, checked on the totals under the lock: concurrent claims cannot
 * overshoot). Does not defend against: the number of sellers (each has its own budget); the lock's wait, which
 * holds a pooled connection per waiting write of the same seller (bounded by the session's lock_timeout).
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { PaymentIdBeginReply, StoredAnswer } from '../../../shared/payment-identifier-wire.js';

export interface PaymentIdRowKey {
  sellerId: string;
  route: string;
  id: string;
  fingerprint: string;
}

/** A seller's rows (expired ones until swept) and bytes of stored answers. */
export interface PaymentIdTotals {
  ids: number;
  answerBytes: number;
}

/** A write refused at a budget: the totals it met, and when the seller's next row expires (none: undefined). */
export interface PaymentIdBudgetFull {
  kind: 'full';
  totals: PaymentIdTotals;
  nextExpiry: Date | undefined;
}

export type PaymentIdBeginResult = { kind: 'answered'; reply: PaymentIdBeginReply } | PaymentIdBudgetFull;

export type PaymentIdCompleteResult =
  /** `withBody`: false when the answer was kept without its body (the whole one did not fit the budget). */
  { kind: 'kept'; withBody: boolean } | { kind: 'not_pending' } | PaymentIdBudgetFull;

interface Row {
  fingerprint: string;
  state: 'pending' | 'done';
  answer: StoredAnswer | null;
  expires_at: Date;
}

/** Expired rows of the seller a write at its budget deletes before it looks again. */
const SWEEP_AT_BUDGET = 200;

/** The advisory-lock key of a seller's payment ids: the first 8 bytes of SHA-256("payment_ids:" + id). */
function sellerLockKey(sellerId: string): bigint {
  return createHash('sha256').update(`payment_ids:${sellerId}`).digest().readBigInt64BE(0);
}

async function lockSeller(trx: Knex.Transaction, sellerId: string): Promise<void> {
  await trx.raw(`SELECT pg_advisory_xact_lock(${sellerLockKey(sellerId).toString()})`);
}

/**
 * Keeps the answer (the whole one, else `lean` when given) if the seller's answer bytes stay within `maxBytes`,
 * on its pending claim of `fingerprint`. The sizes are PostgreSQL's (the answer's JSON text, as stored).
 */
const COMPLETE_SQL = `
WITH offered AS (
  SELECT a.whole, a.lean, octet_length(a.whole::text) AS whole_bytes, octet_length(a.lean::text) AS lean_bytes,
         :maxBytes::bigint - COALESCE((SELECT answer_bytes FROM seller_payment_id_totals WHERE seller_id = :seller), 0)
           AS room
    FROM (SELECT :whole::jsonb AS whole, :lean::jsonb AS lean) a
), pick AS (
  SELECT CASE WHEN whole_bytes <= room THEN whole WHEN lean IS NOT NULL AND lean_bytes <= room THEN lean END AS answer,
         whole_bytes <= room AS with_body
    FROM offered
)
UPDATE seller_payment_ids p SET state = 'done', answer = pick.answer, expires_at = :until FROM pick
 WHERE p.seller_id = :seller AND p.route = :route AND p.payment_id = :id AND p.fingerprint = :fingerprint
   AND p.state = 'pending' AND pick.answer IS NOT NULL
RETURNING pick.with_body`;

export class PgPaymentIdStore {
  constructor(private readonly knex: Knex) {}

  private where(k: PaymentIdRowKey) {
    return { seller_id: k.sellerId, route: k.route, payment_id: k.id };
  }

  /**
   * Claims the key for `fingerprint` until `until`, or says who holds it. A key not stored yet is a new row: refused
   * (`full`) when the seller holds `maxIds` rows even after its expired ones are swept. A retry of a held key, or
   * the take-over of an expired one, adds no row and is never refused.
   */
  async begin(k: PaymentIdRowKey, now: Date, until: Date, maxIds: number): Promise<PaymentIdBeginResult> {
    return this.knex.transaction(async (trx) => {
      await lockSeller(trx, k.sellerId);
      const row = (await trx('seller_payment_ids')
        .where(this.where(k))
        .first('fingerprint', 'state', 'answer', 'expires_at')) as Row | undefined;
      if (row && row.expires_at > now) return { kind: 'answered', reply: heldBy(row, k.fingerprint) };
      if (!row) {
        const full = await this.atBudget(trx, k.sellerId, now, (t) => t.ids >= maxIds);
        if (full) return full;
      }
      const claimed = await trx.raw(
        `INSERT INTO seller_payment_ids (seller_id, route, payment_id, fingerprint, state, answer, created_at, expires_at)
         VALUES (?, ?, ?, ?, 'pending', NULL, ?, ?)
         ON CONFLICT (seller_id, route, payment_id) DO UPDATE
           SET fingerprint = EXCLUDED.fingerprint, state = 'pending', answer = NULL,
               created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
           WHERE seller_payment_ids.expires_at <= EXCLUDED.created_at
         RETURNING 1`,
        [k.sellerId, k.route, k.id, k.fingerprint, now, until],
      );
      // Under the seller's lock the row cannot have changed since it was read; in flight is the safe answer anyway.
      return { kind: 'answered', reply: claimed.rows.length > 0 ? { outcome: 'new' } : { outcome: 'in_flight' } };
    });
  }

  /**
   * The pending claim of `fingerprint` becomes its answer, kept until `until`: the whole answer if the seller's
   * answer bytes stay within `maxAnswerBytes`, else `lean` (the answer without its body) if that fits, else nothing
   * (`full`; the claim stays pending until its TTL). `not_pending`: there is no such pending claim.
   */
  async complete(
    k: PaymentIdRowKey,
    answers: { whole: StoredAnswer; lean: StoredAnswer | undefined },
    now: Date,
    until: Date,
    maxAnswerBytes: number,
  ): Promise<PaymentIdCompleteResult> {
    return this.knex.transaction(async (trx) => {
      await lockSeller(trx, k.sellerId);
      const keep = async (lean: StoredAnswer | undefined): Promise<PaymentIdCompleteResult | undefined> => {
        const kept = await trx.raw(COMPLETE_SQL, {
          whole: JSON.stringify(answers.whole),
          lean: lean ? JSON.stringify(lean) : null,
          maxBytes: maxAnswerBytes,
          until,
          seller: k.sellerId,
          route: k.route,
          id: k.id,
          fingerprint: k.fingerprint,
        });
        const first = (kept.rows as Array<{ with_body: boolean }>)[0];
        return first ? { kind: 'kept', withBody: first.with_body } : undefined;
      };
      const whole = await keep(undefined);
      if (whole) return whole;
      const pending = await trx('seller_payment_ids')
        .where({ ...this.where(k), fingerprint: k.fingerprint, state: 'pending' })
        .first('payment_id');
      if (!pending) return { kind: 'not_pending' };
      // Pending, so the whole answer did not fit: expired rows may make room, else the lean answer may fit.
      await this.sweepLocked(trx, k.sellerId, now, SWEEP_AT_BUDGET);
      const kept = await keep(answers.lean);
      if (kept) return kept;
      return {
        kind: 'full',
        totals: await totalsOf(trx, k.sellerId),
        nextExpiry: await nextExpiry(trx, k.sellerId, now),
      };
    });
  }

  /** Drops the pending claim of `fingerprint`; false when there is none. */
  async release(k: PaymentIdRowKey): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      await lockSeller(trx, k.sellerId);
      const deleted = await trx('seller_payment_ids')
        .where({ ...this.where(k), fingerprint: k.fingerprint, state: 'pending' })
        .delete();
      return deleted > 0;
    });
  }

  /**
   * Sellers holding rows expired at `now`, found among the `scan` rows that expired first (index on expires_at),
   * `exclude`'s left out.
   */
  async expiredSellers(now: Date, scan: number, exclude: readonly string[] = []): Promise<string[]> {
    const result = await this.knex.raw(
      `SELECT DISTINCT seller_id FROM (
         SELECT seller_id FROM seller_payment_ids WHERE expires_at <= ? AND seller_id <> ALL(?::text[])
          ORDER BY expires_at LIMIT ?) e`,
      [now, [...exclude], scan],
    );
    return (result.rows as Array<{ seller_id: string }>).map((r) => r.seller_id);
  }

  /** Deletes up to `limit` of the seller's expired rows, under its lock; how many it deleted. */
  async sweepSeller(sellerId: string, now: Date, limit: number): Promise<number> {
    return this.knex.transaction(async (trx) => {
      await lockSeller(trx, sellerId);
      return this.sweepLocked(trx, sellerId, now, limit);
    });
  }

  private async sweepLocked(trx: Knex.Transaction, sellerId: string, now: Date, limit: number): Promise<number> {
    const result = await trx.raw(
      `DELETE FROM seller_payment_ids WHERE ctid IN (
         SELECT ctid FROM seller_payment_ids WHERE seller_id = ? AND expires_at <= ? LIMIT ?)`,
      [sellerId, now, limit],
    );
    return result.rowCount ?? 0;
  }

  /** `full` when `over` holds for the seller's totals even after a batch of its expired rows is swept. */
  private async atBudget(
    trx: Knex.Transaction,
    sellerId: string,
    now: Date,
    over: (t: PaymentIdTotals) => boolean,
  ): Promise<PaymentIdBudgetFull | undefined> {
    let totals = await totalsOf(trx, sellerId);
    if (!over(totals)) return undefined;
    if ((await this.sweepLocked(trx, sellerId, now, SWEEP_AT_BUDGET)) > 0) totals = await totalsOf(trx, sellerId);
    if (!over(totals)) return undefined;
    return { kind: 'full', totals, nextExpiry: await nextExpiry(trx, sellerId, now) };
  }
}

/** What a claim of a held (unexpired) key answers. */
function heldBy(row: Row, fingerprint: string): PaymentIdBeginReply {
  if (row.fingerprint !== fingerprint) return { outcome: 'conflict' };
  if (row.state === 'pending' || !row.answer) return { outcome: 'in_flight' };
  return { outcome: 'stored', answer: row.answer };
}

async function totalsOf(db: Knex.Transaction, sellerId: string): Promise<PaymentIdTotals> {
  const row = (await db('seller_payment_id_totals').where({ seller_id: sellerId }).first('id_rows', 'answer_bytes')) as
    { id_rows: number; answer_bytes: string } | undefined;
  return { ids: Number(row?.id_rows ?? 0), answerBytes: Number(row?.answer_bytes ?? 0) };
}

/** When the seller's next row (after `now`) expires, on the (seller_id, expires_at) index. */
async function nextExpiry(trx: Knex.Transaction, sellerId: string, now: Date): Promise<Date | undefined> {
  const row = (await trx('seller_payment_ids')
    .where({ seller_id: sellerId })
    .andWhere('expires_at', '>', now)
    .orderBy('expires_at')
    .first('expires_at')) as { expires_at: Date } | undefined;
  return row?.expires_at;
}
