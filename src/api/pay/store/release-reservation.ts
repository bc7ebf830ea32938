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
import type { policyWindows } from '../../../../policy/policy-windows.js';
import { withWalletTransaction } from '../../db/wallet-transaction.js';
import { giveBackSpend } from './give-back-spend.js';

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
export function releaseReservation(
  knex: Knex,
  reservation: ReleasedReservation,
  actor: string,
  reason: ReleaseReason,
  at: Date,
): Promise<boolean> {
  const { walletId, windows } = reservation;
  return withWalletTransaction(knex, walletId, async (tx) => {
    const [row] = await tx.query<{ id: string }>(
      `UPDATE authorizations SET status = 'released', idempotency_key = NULL WHERE id = ? AND status = 'reserved' RETURNING id`,
      [reservation.authorizationId],
      'treasury_pay_release_v1',
    );
    if (!row) return false;
    await giveBackSpend(
      tx,
      walletId,
      { amountMicro: reservation.amountMicro, windows, uncount: true, patTokenId: reservation.patTokenId },
      {
        eventType: 'payment.released',
        actor,
        payload: {
          authorization_id: reservation.authorizationId,
          decision_id: reservation.decisionId,
          amount_usd: reservation.amountUsd,
          nonce: reservation.nonce,
          reason,
        },
        at,
      },
    );
    return true;
  });
}
