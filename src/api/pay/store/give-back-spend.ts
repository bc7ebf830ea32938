/**
 * Takes an amount back out of the totals a payment was counted in, inside the wallet's locked transaction:
 * the wallet's day, week and month windows of the moment it was decided (and one payment off their count
 * when the payment itself is undone), the paying buyer PAT's total that day, and an audit row at the head of
 * the wallet's chain saying why. Used by a released reservation (./release-reservation.ts) and a verified
 * `upto` settlement (../settlement-service.ts).
 *
 * Defends: a give-back counted without its audit row, or against windows it was never counted in.
 * Does not defend: giving back more than was counted — callers give back at most what the payment added.
 */
import type { policyWindows } from '../../../../policy/policy-windows.js';
import type { WalletTx } from '../../db/wallet-transaction.js';
import { appendWalletAudit, isoDate } from './pay-statements.js';

export async function giveBackSpend(
  tx: WalletTx,
  walletId: string,
  back: {
    amountMicro: bigint;
    /** The windows the payment was counted in: those of the moment it was decided. */
    windows: ReturnType<typeof policyWindows>;
    /** True when the payment itself is undone (released): its count leaves the windows too. */
    uncount: boolean;
    /** The buyer PAT whose daily total counted it (an actor that is not one matches no total). */
    patTokenId?: string | undefined;
  },
  audit: { eventType: string; actor: string; payload: Record<string, unknown>; at: Date },
): Promise<void> {
  const { amountMicro, windows } = back;
  if (amountMicro > 0n || back.uncount) {
    await tx.query(
      `UPDATE wallet_spend_totals SET spent_micro = spent_micro - ?, payment_count = payment_count - ?
        WHERE wallet_id = ? AND ((window_kind = 'day' AND window_start = ?::date) OR (window_kind = 'week' AND window_start = ?::date) OR (window_kind = 'month' AND window_start = ?::date))`,
      [
        amountMicro.toString(),
        back.uncount ? 1 : 0,
        walletId,
        isoDate(windows.dayStart),
        isoDate(windows.weekStart),
        isoDate(windows.monthStart),
      ],
      'treasury_give_back_totals_v1',
    );
  }
  if (back.patTokenId && amountMicro > 0n) {
    await tx.query(
      'UPDATE pat_spend_totals SET spent_micro = spent_micro - ? WHERE token_id = ? AND day = ?::date',
      [amountMicro.toString(), back.patTokenId, isoDate(windows.dayStart)],
      'treasury_give_back_pat_total_v1',
    );
  }
  await appendWalletAudit(tx, { chainKey: walletId, ...audit });
}
