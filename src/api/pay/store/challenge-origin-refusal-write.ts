/**
 * Records a payment refused for the origin that asked for it (../refuse-challenge-origin.ts) as the pay path
 * records every refusal of a payment: a `pd_…` policy_decisions row (`deny`, `decided_by = 'api'`, the rule
 * `challenge_origin_not_seller`) and a `policy.denied` audit row at the head of the wallet's chain, under the
 * wallet's lock, in one transaction — after the wallet was found to be the caller's and active.
 *
 * Defends: a refusal with no decision to name or no audit row; a caller writing into another account's wallet
 * chain or a revoked wallet's (404 / 410 as the pay path answers them, nothing written). Does not defend: a write
 * that fails otherwise (the caller answers the refusal all the same, without a decision id).
 */
import type { Knex } from 'knex';
import { withWalletTransaction } from '../../db/wallet-transaction.js';
import { AppError } from '../../errors/app-error.js';
import { appendWalletAudit } from './pay-statements.js';

export interface ChallengeOriginRefusalRow {
  id: string;
  accountId: string;
  walletId: string;
  amountMicro: bigint;
  /** The audit payload's amount (USD string). */
  amountUsd: string;
  to: string;
  network: string;
  capability: string | null;
  challengeOrigin: string;
  /** The refused rule's sentence for the decision row. */
  message: string;
  actor: string;
  at: Date;
}

export const CHALLENGE_ORIGIN_RULE = 'challenge_origin_not_seller';

export function writeChallengeOriginRefusal(knex: Knex, row: ChallengeOriginRefusalRow): Promise<void> {
  return withWalletTransaction(knex, row.walletId, async (tx) => {
    const [wallet] = await tx.query<{ account_id: string; status: string; revoked_at: Date | null }>(
      'SELECT account_id, status, revoked_at FROM wallets WHERE id = ?',
      [row.walletId],
      'treasury_refusal_wallet_v1',
    );
    if (!wallet || wallet.account_id !== row.accountId) throw new AppError('wallet_not_found');
    if (wallet.status === 'revoked')
      throw new AppError('wallet_revoked', {
        fields: { wallet_id: row.walletId, revoked_at: wallet.revoked_at?.toISOString() ?? null },
      });
    const violation = {
      rule: CHALLENGE_ORIGIN_RULE,
      message: row.message,
      challenge_origin: row.challengeOrigin,
      network: row.network,
    };
    await tx.query(
      `INSERT INTO policy_decisions (id, wallet_id, outcome, kind, amount_micro, to_address, capability, violations, headroom, created_at, decided_by)
       VALUES (?, ?, 'deny', 'pay', ?, ?, ?, ?::jsonb, '{}'::jsonb, ?, 'api')`,
      [row.id, row.walletId, row.amountMicro.toString(), row.to, row.capability, JSON.stringify([violation]), row.at],
      'treasury_challenge_origin_denial_v1',
    );
    await appendWalletAudit(tx, {
      chainKey: row.walletId,
      eventType: 'policy.denied',
      actor: row.actor,
      payload: {
        decision_id: row.id,
        decided_by: 'api',
        kind: 'pay',
        to: row.to,
        amount_usd: row.amountUsd,
        capability: row.capability,
        rules: [CHALLENGE_ORIGIN_RULE],
        challenge_origin: row.challengeOrigin,
      },
      at: row.at,
    });
  });
}
