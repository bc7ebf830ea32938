/**
 * Whether a mined transaction backs a seller's ledger row: it succeeded, it is deep enough, and one of its
 * logs is the USDC contract's ERC-20 `Transfer` (the event `transferWithAuthorization` emits too, so EIP-3009
 * x402 payments and plain transfers are read alike) from the reported payer to one of the seller's proven
 * pay-to addresses, for exactly the reported amount. The checks run in a fixed order and each failure is a
 * stable snake_case reason:
 *   1. depth     — fewer confirmations than the network requires: `pending` (awaiting_confirmations); a
 *                  transaction is judged only once it is as deep as required, so a reorg cannot turn a
 *                  rejection into a payment or back before the depth is reached;
 *   2. receipt   — reverted: `rejected` (transaction_reverted);
 *   3. asset     — no Transfer of the network's USDC at all: `rejected` (asset_not_transferred);
 *   4. recipient — no such Transfer to this seller: `rejected` (recipient_mismatch) — the transaction paid
 *                  someone else, whoever reported it first;
 *   5. payer     — none from the reported payer: `rejected` (payer_mismatch);
 *   6. amount    — none of exactly the reported amount: `rejected` (amount_mismatch);
 *   7. self      — the matching Transfers come from one of the seller's own addresses (a proven pay-to, its
 *                  collection wallet on the network): `rejected` (self_payment) — the seller moved its own
 *                  money, which is neither revenue nor a paid call.
 * A match answers the matching logs' indexes (a log backs one verified row, see the migration's unique index).
 *
 * Does not defend: a lying RPC endpoint (the receipt is whatever it answers); a reorganisation deeper than
 * the configured confirmations; tokens other than the network's configured USDC (the ledger row names no
 * asset, x402 payments here are USDC); a seller paying itself from an address it never proved (the chain cannot
 * tell that address's holder from a buyer; the transfer still costs it the gas and moves real USDC).
 */
import { tokenTransfers } from './token-transfers.js';
import type { MinedTransaction } from './balance-reader.js';

export type LedgerRejection =
  | 'transaction_reverted'
  | 'asset_not_transferred'
  | 'recipient_mismatch'
  | 'payer_mismatch'
  | 'amount_mismatch'
  | 'self_payment';

export type LedgerTransferVerdict =
  | { kind: 'verified'; logIndexes: number[]; confirmations: number }
  | { kind: 'pending'; reason: 'awaiting_confirmations'; confirmations: number }
  | { kind: 'rejected'; reason: LedgerRejection; confirmations: number };

export interface ExpectedLedgerTransfer {
  /** The network's USDC contract. */
  asset: string;
  payer: string;
  /** Where the row's money must have gone: the seller's proven pay-to addresses, or its collection wallet. */
  payTo: readonly string[];
  /** Every address of the seller on the network (proven pay-to addresses, collection wallet): no payer of its revenue. */
  ownAddresses: readonly string[];
  amountRaw: bigint;
  requiredConfirmations: number;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Judges `tx` against what the ledger row claims (see the header for the order of the checks). */
export function verifyLedgerTransfer(
  tx: Pick<MinedTransaction, 'status' | 'logs' | 'confirmations'>,
  expected: ExpectedLedgerTransfer,
): LedgerTransferVerdict {
  const confirmations = tx.confirmations;
  if (confirmations < expected.requiredConfirmations)
    return { kind: 'pending', reason: 'awaiting_confirmations', confirmations };
  if (tx.status !== 'success') return { kind: 'rejected', reason: 'transaction_reverted', confirmations };
  const transfers = tokenTransfers(tx.logs, expected.asset).map(({ log, ...t }) => ({ ...t, logIndex: log.logIndex }));
  if (transfers.length === 0) return { kind: 'rejected', reason: 'asset_not_transferred', confirmations };
  const toSeller = transfers.filter((t) => expected.payTo.some((p) => same(p, t.to)));
  if (toSeller.length === 0) return { kind: 'rejected', reason: 'recipient_mismatch', confirmations };
  const fromPayer = toSeller.filter((t) => same(t.from, expected.payer));
  if (fromPayer.length === 0) return { kind: 'rejected', reason: 'payer_mismatch', confirmations };
  const exact = fromPayer.filter((t) => t.value === expected.amountRaw);
  if (exact.length === 0) return { kind: 'rejected', reason: 'amount_mismatch', confirmations };
  const fromOthers = exact.filter((t) => !expected.ownAddresses.some((own) => same(own, t.from)));
  if (fromOthers.length === 0) return { kind: 'rejected', reason: 'self_payment', confirmations };
  return { kind: 'verified', logIndexes: fromOthers.map((t) => t.logIndex), confirmations };
}
