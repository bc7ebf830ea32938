/**
 * Gives back a reservation whose signature never left: under the wallet's lock, the authorization row goes
 * from `reserved` to `released` (its Idempotency-Key freed for a retry), the amount leaves the wallet's
 * day, week and month totals it was counted in (and the buyer PAT's day, when a PAT reserved it), and a
 * `payment.released` event with the reason joins the wallet's audit chain.
 *
 * Defends: a spend counted for a payment that cannot happen. Only a row still `reserved` is touched — a
 * record that committed meanwhile (the row is `signed`) or an earlier release is left as it is, so callers
 * may try as often as they like and several processes may race for the same row.
 * Does not defend: a caller that releases a reservation whose signature may still leave; callers release
 * only when none left (signer failed, record failed) or when none can move funds any more (expired).
 */
import type { Knex } from 'knex';
import type { policyWindows } from '../../policy/policy-windows.js';
import { buildAuditRow, type AuditHead } from '../audit/audit-ledger.js';
import { withWalletTransaction } from '../db/wallet-transaction.js';
import { auditValues, INSERT_AUDIT, isoDate } from './pay-statements.js';

export type ReleaseReason = 'signer_failed' | 'record_failed' | 'write_unacknowledged' | 'expired_unsigned';

export interface ReleasedReservation {
  walletId: string;
  authorizationId: string;
  decisionId: string;
  amountMicro: bigint;
  amountUsd: string;
  nonce: string;
  /** The windows it was counted in: those of the moment it was decided. */
  windows: ReturnType<typeof policyWindows>;
  /** The buyer PAT whose daily total counted it, if a PAT reserved it. */
  patTokenId?: string | undefined;
}

/** True when this call released the row; false when it was no longer reserved. */
export function releaseReservation(knex: Knex, reservation: ReleasedReservation, actor: string, reason: ReleaseReason, at: Date): Promise<boolean> {
  const { walletId, windows } = reservation;
  const amount = reservation.amountMicro.toString();
  return withWalletTransaction(knex, walletId, async (tx) => {
    const [row] = await tx.query<{ id: string }>(`UPDATE authorizations SET status = 'released', idempotency_key = NULL WHERE id = ? AND status = 'reserved' RETURNING id`, [reservation.authorizationId], 'treasury_pay_release_v1');
    if (!row) return false;
    await tx.query(
      `UPDATE wallet_spend_totals SET spent_micro = spent_micro - ?, payment_count = payment_count - 1
        WHERE wallet_id = ? AND ((window_kind = 'day' AND window_start = ?::date) OR (window_kind = 'week' AND window_start = ?::date) OR (window_kind = 'month' AND window_start = ?::date))`,
      [amount, walletId, isoDate(windows.dayStart), isoDate(windows.weekStart), isoDate(windows.monthStart)],
      'treasury_pay_release_totals_v1',
    );
    if (reservation.patTokenId) {
      await tx.query('UPDATE pat_spend_totals SET spent_micro = spent_micro - ? WHERE token_id = ? AND day = ?::date', [amount, reservation.patTokenId, isoDate(windows.dayStart)], 'treasury_pat_release_v1');
    }
    const [head] = await tx.query<AuditHead>('SELECT seq, hash FROM audit_events WHERE chain_key = ? ORDER BY seq DESC LIMIT 1', [walletId], 'treasury_audit_head_v1');
    const audit = buildAuditRow(head ?? null, {
      chainKey: walletId,
      eventType: 'payment.released',
      actor,
      payload: { authorization_id: reservation.authorizationId, decision_id: reservation.decisionId, amount_usd: reservation.amountUsd, nonce: reservation.nonce, reason },
      at,
    });
    await tx.query(INSERT_AUDIT, auditValues(audit), 'treasury_audit_append_v1');
    return true;
  });
}
