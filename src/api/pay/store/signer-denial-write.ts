/**
 * Writes a payment the signer refused under the wallet's owner-signed policy
 * (docs/adr/0012-owner-signed-policies.md): its `pd_…` policy_decisions row (`decided_by = 'signer'`, the
 * signer's violations) and a `policy.denied` audit row at the head of the wallet's chain, under the wallet's
 * lock, in one transaction — after the reservation it had made was given back (../release-eventually.ts).
 *
 * Defends: a refusal the API answers without a decision row to name, or a decision row without its audit
 * row. Does not defend: the refusal itself (the signer's), nor a write that fails (the caller answers then
 * without a decision id).
 */
import { withWalletTransaction } from '../../db/wallet-transaction.js';
import type { Knex } from 'knex';
import { appendWalletAudit } from './pay-statements.js';

export interface SignerDenialRow {
  id: string;
  walletId: string;
  kind: string;
  amountMicro: bigint;
  to: string;
  capability: string | null;
  violations: ReadonlyArray<Record<string, unknown>>;
  /** The version of the signed policy the signer holds. */
  policyVersion: number | null;
  actor: string;
  /** The audit payload's amount (USD string). */
  amountUsd: string;
  at: Date;
}

export function writeSignerDenial(knex: Knex, row: SignerDenialRow): Promise<void> {
  return withWalletTransaction(knex, row.walletId, async (tx) => {
    await tx.query(
      `INSERT INTO policy_decisions (id, wallet_id, outcome, kind, amount_micro, to_address, capability, violations, headroom, created_at, decided_by)
       VALUES (?, ?, 'deny', ?, ?, ?, ?, ?::jsonb, '{}'::jsonb, ?, 'signer')`,
      [
        row.id,
        row.walletId,
        row.kind,
        row.amountMicro.toString(),
        row.to,
        row.capability,
        JSON.stringify(row.violations),
        row.at,
      ],
      'treasury_signer_denial_v1',
    );
    await appendWalletAudit(tx, {
      chainKey: row.walletId,
      eventType: 'policy.denied',
      actor: row.actor,
      payload: {
        decision_id: row.id,
        decided_by: 'signer',
        kind: row.kind,
        to: row.to,
        amount_usd: row.amountUsd,
        capability: row.capability,
        rules: row.violations.map((v) => v.rule),
        policy_version: row.policyVersion,
      },
      at: row.at,
    });
  });
}
