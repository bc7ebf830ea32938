/**
 * Whether a landed Solana transaction backs a seller's ledger row — the Solana counterpart of
 * ./verify-ledger-transfer.ts, with the same verdicts and reasons. The transaction (as ./solana-transaction-
 * reader.ts reads it: `getTransaction`, base64, and its signature status) must have landed and succeeded, and
 * one of its top-level SPL `TransferChecked` instructions (Token or Token-2022) must move the network's USDC
 * from a token account the reported payer owned to the associated token account of one of the seller's proven
 * pay-to addresses, for exactly the reported amount; the destination's balance must have grown by at least
 * that much. The checks run in a fixed order, each failure a stable snake_case reason:
 *   1. landed    — not confirmed or finalized yet: `pending` (awaiting_confirmations);
 *   2. status    — failed on chain (`meta.err`): `rejected` (transaction_reverted);
 *   3. asset     — no TransferChecked of the USDC mint: `rejected` (asset_not_transferred);
 *   4. recipient — none to the seller's associated token accounts: `rejected` (recipient_mismatch);
 *   5. payer     — none from an account the payer owned (pre-token-balance owner): `rejected` (payer_mismatch);
 *   6. amount    — none of exactly the amount, or the destination did not grow by it: `rejected` (amount_mismatch);
 *   7. self      — the matching transfers' source accounts are owned by one of the seller's own addresses (a
 *                  proven pay-to, its collection wallet on the network): `rejected` (self_payment).
 * A match answers the matching instructions' indexes (they play the part of log indexes: one instruction backs
 * one verified row, the ledger's unique index on (network, tx_hash, log_index)).
 *
 * Does not defend: a lying RPC endpoint; transfers made by inner (CPI) instructions (x402 `exact` transfers
 * are top-level; another program's transfer is not read and the row is rejected); a rollback of a `confirmed`
 * block (rare on Solana; `finalized` is the stronger word and is also accepted); a seller paying itself from an
 * address it never proved.
 */
import type { LedgerTransferVerdict } from './verify-ledger-transfer.js';

const TOKEN_PROGRAMS = new Set([
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
]);
const TRANSFER_CHECKED = 12;

export interface SolanaTokenBalance {
  accountIndex: number;
  mint: string;
  owner: string | undefined;
  amount: bigint;
}

/** A landed transaction as the ledger check reads it. */
export interface LandedSolanaTransaction {
  confirmationStatus: 'processed' | 'confirmed' | 'finalized' | undefined;
  /** Confirmations the status reports (undefined once finalized). */
  confirmations: number | undefined;
  failed: boolean;
  /** Static keys, then the lookup tables' writable and read-only addresses (the message's account order). */
  accountKeys: readonly string[];
  instructions: ReadonlyArray<{ programIndex: number; accounts: readonly number[]; data: Uint8Array }>;
  preTokenBalances: readonly SolanaTokenBalance[];
  postTokenBalances: readonly SolanaTokenBalance[];
}

export interface ExpectedSolanaTransfer {
  mint: string;
  payer: string;
  /** The associated token accounts of the seller's proven pay-to addresses for the mint. */
  destinations: readonly string[];
  amountRaw: bigint;
  /**
   * Every address of the seller on the network (proven pay-to addresses, collection wallet): a transfer from an
   * account one of them owns is the seller paying itself. Absent: none (a settlement check, not a seller's row).
   */
  ownAddresses?: readonly string[] | undefined;
}

interface Transfer {
  index: number;
  source: string;
  mint: string;
  destination: string;
  amount: bigint;
  sourceOwner: string | undefined;
}

function transfersOf(tx: LandedSolanaTransaction): Transfer[] {
  const keys = tx.accountKeys;
  const out: Transfer[] = [];
  tx.instructions.forEach((ix, index) => {
    const program = keys[ix.programIndex];
    if (!program || !TOKEN_PROGRAMS.has(program) || ix.data[0] !== TRANSFER_CHECKED || ix.data.length !== 10) return;
    const [sourceAt, mintAt, destinationAt] = ix.accounts;
    const [source, mint, destination] = [keys[sourceAt ?? -1], keys[mintAt ?? -1], keys[destinationAt ?? -1]];
    if (!source || !mint || !destination) return;
    const amount = Buffer.from(ix.data.subarray(1, 9)).readBigUInt64LE(0);
    const sourceOwner = tx.preTokenBalances.find((b) => b.accountIndex === sourceAt && b.mint === mint)?.owner;
    out.push({ index, source, mint, destination, amount, sourceOwner });
  });
  return out;
}

/** How much the token account at `index` grew for `mint` (post − pre; an absent entry counts as 0). */
function growth(tx: LandedSolanaTransaction, account: string, mint: string): bigint {
  const index = tx.accountKeys.indexOf(account);
  const of = (list: readonly SolanaTokenBalance[]) =>
    list.find((b) => b.accountIndex === index && b.mint === mint)?.amount ?? 0n;
  return of(tx.postTokenBalances) - of(tx.preTokenBalances);
}

/** Judges `tx` against what the ledger row claims (see the header for the order of the checks). */
export function verifySolanaLedgerTransfer(
  tx: LandedSolanaTransaction,
  expected: ExpectedSolanaTransfer,
): LedgerTransferVerdict {
  const finalized = tx.confirmationStatus === 'finalized';
  const confirmations = finalized ? 32 : (tx.confirmations ?? 0);
  if (!finalized && tx.confirmationStatus !== 'confirmed')
    return { kind: 'pending', reason: 'awaiting_confirmations', confirmations };
  if (tx.failed) return { kind: 'rejected', reason: 'transaction_reverted', confirmations };
  const ofMint = transfersOf(tx).filter((t) => t.mint === expected.mint);
  if (ofMint.length === 0) return { kind: 'rejected', reason: 'asset_not_transferred', confirmations };
  const toSeller = ofMint.filter((t) => expected.destinations.includes(t.destination));
  if (toSeller.length === 0) return { kind: 'rejected', reason: 'recipient_mismatch', confirmations };
  const fromPayer = toSeller.filter((t) => t.sourceOwner === expected.payer);
  if (fromPayer.length === 0) return { kind: 'rejected', reason: 'payer_mismatch', confirmations };
  const exact = fromPayer.filter(
    (t) => t.amount === expected.amountRaw && growth(tx, t.destination, t.mint) >= expected.amountRaw,
  );
  if (exact.length === 0) return { kind: 'rejected', reason: 'amount_mismatch', confirmations };
  const own = expected.ownAddresses ?? [];
  const fromOthers = exact.filter((t) => !own.some((address) => address === t.sourceOwner));
  if (fromOthers.length === 0) return { kind: 'rejected', reason: 'self_payment', confirmations };
  return { kind: 'verified', logIndexes: fromOthers.map((t) => t.index), confirmations };
}
