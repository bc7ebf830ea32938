/**
 * Which mode a seller's ledger row is, from where its transfer went (./ledger-verifier.ts): the row is checked
 * against the seller's collection wallet on its network (a match makes it `platform_mor`: the platform collected
 * it and owes it) and against the seller's proven pay-to addresses (a match makes it `direct`: revenue, nothing
 * owed), the mode the seller was in when it reported first — so a transaction that paid both is the reported
 * mode's — and one verdict decides.
 *
 * Defends: a row judged by the seller's mode at report time rather than by where its buyer paid (a switch of
 * mode between the payment and the report); a rejection naming a mismatch of the wrong mode (the reason is the
 * one of the mode whose address the transaction paid). Does not defend: what each check decides
 * (../../chain/verify-ledger-transfer.ts).
 */
import type { LedgerTransferVerdict } from '../../chain/verify-ledger-transfer.js';
import type { RowClaim, RowRecipients } from '../store/ledger-row-claim.js';

export type PayoutMode = RowClaim['payout_mode'];

/** Where a row may have paid, in one mode. */
export interface Candidate {
  mode: PayoutMode;
  recipients: string[];
}

/**
 * Where the row may have paid, the mode it was reported in first: the seller's collection wallet on the network
 * (platform_mor) and its proven pay-to addresses (direct), each only when it has one.
 */
export function candidatesOf(recipients: RowRecipients, reported: PayoutMode): Candidate[] {
  const both: Candidate[] = [
    { mode: 'platform_mor', recipients: recipients.collection },
    { mode: 'direct', recipients: recipients.payTo },
  ];
  if (reported === 'direct') both.reverse();
  return both.filter((c) => c.recipients.length > 0);
}

/**
 * The verdict that decides among the candidates' (one transaction, so the same depth and receipt for each), in
 * their order: a match; else one still awaiting depth; else the reason of a mode whose address the transaction
 * paid (payer, amount, self); else `recipient_mismatch` (it paid none of the seller's addresses).
 */
export function decisive<T extends { mode: PayoutMode; verdict: LedgerTransferVerdict }>(checked: readonly T[]): T {
  if (checked.length === 0) throw new RangeError('no candidate verdict');
  return (
    checked.find((c) => c.verdict.kind === 'verified') ??
    checked.find((c) => c.verdict.kind === 'pending') ??
    checked.find((c) => c.verdict.kind === 'rejected' && c.verdict.reason !== 'recipient_mismatch') ??
    checked[0]!
  );
}
