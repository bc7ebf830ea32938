/**
 * Whether a landed Solana transaction settled a given x402 `exact` payment of a Treasury wallet: the Solana
 * counterpart of ./verify-exact-settlement.ts, over the transaction as ./solana-transaction-reader.ts reads it.
 * The checks run in a fixed order, each failure a stable reason:
 *   1. landed  — confirmed or finalized (as seller ledger rows require): otherwise 409 settlement_unconfirmed;
 *   2. named   — the reported signature is the transaction's id (its first signature): `authorization_mismatch`;
 *   3. status  — it succeeded (`meta.err` empty): `reverted`;
 *   4. message — the SHA-256 of its message equals the authorization's nonce (the message Treasury built and
 *                the wallet signed): `authorization_mismatch`;
 *   5. transfer — one of its TransferChecked instructions moved the signed amount of the signed mint from the
 *                wallet's token account to the payee's associated token account, and that account grew by it
 *                (./solana-ledger-transfer.ts, the seller ledger's own check): `authorization_mismatch`.
 * The answer is the amount settled: the signed amount, all of it.
 *
 * Why the message hash: the transaction id is the fee payer's signature (the facilitator's), not the wallet's,
 * so it cannot be compared with what Treasury signed; the message is. Equal hashes mean the bytes that landed
 * are exactly the bytes decided and signed — accounts, amount, mint, payee, memo and blockhash — and a
 * message lands at most once (its signatures are its replay guard; its blockhash expires), so a transaction
 * with this hash is this authorization's one settlement. The wallet's signature over it is then Treasury's own
 * (Ed25519 is deterministic and the chain verified it). Step 5 re-reads what moved from the chain's balances,
 * so the row's terms (amount, payee) are checked against the chain too, not only against the message.
 * Defends: a payment shown settled on a claim — another transaction (even the same wallet's, to the same payee,
 * for the same amount), one that failed, or one named by a signature other than its id.
 * Does not defend: a lying RPC endpoint; a rollback of a `confirmed` block (`finalized` is the firmer word).
 */
import { AppError } from '../errors/app-error.js';
import { verifySolanaLedgerTransfer } from './solana-ledger-transfer.js';
import type { ReadSolanaTransaction } from './solana-transaction-reader.js';

/** What Treasury signed, as the settlement must show it. */
export interface SignedSolanaTransfer {
  /** The authorization's nonce: SHA-256 of the message the wallet signed, 0x + 64 hex. */
  messageHash: string;
  mint: string;
  /** The wallet (the transfer's authority; the owner of its source token account). */
  from: string;
  /** The payee's associated token accounts for the mint (SPL Token and Token-2022). */
  destinations: readonly string[];
  amountRaw: bigint;
}

function refuse(reason: 'reverted' | 'authorization_mismatch', message: string): never {
  throw new AppError('settlement_not_verified', { message, fields: { reason } });
}

/** The amount (token raw units) `tx`, reported as `signature`, settled for `signed`; throws otherwise (see the header). */
export function verifySolanaSettlement(
  signature: string,
  tx: ReadSolanaTransaction,
  signed: SignedSolanaTransfer,
): bigint {
  if (tx.confirmationStatus !== 'confirmed' && tx.confirmationStatus !== 'finalized')
    throw new AppError('settlement_unconfirmed', {
      fields: { transaction: signature, confirmations: tx.confirmations ?? 0, required_commitment: 'confirmed' },
    });
  if (tx.id !== signature)
    refuse('authorization_mismatch', "Name the transaction by its id (its first signature, the fee payer's).");
  if (tx.failed) refuse('reverted', 'The transaction failed: it settled nothing.');
  if (tx.messageHash !== signed.messageHash.toLowerCase())
    refuse('authorization_mismatch', 'The transaction is not the message this authorization signed.');
  const verdict = verifySolanaLedgerTransfer(tx, {
    mint: signed.mint,
    payer: signed.from,
    destinations: signed.destinations,
    amountRaw: signed.amountRaw,
  });
  if (verdict.kind !== 'verified')
    refuse(
      'authorization_mismatch',
      "The transaction does not move the signed amount of the payment's mint from the wallet to the payee.",
    );
  return signed.amountRaw;
}
