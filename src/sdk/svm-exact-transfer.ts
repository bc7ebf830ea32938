/**
 * Reads the transfer out of an x402 `exact` Solana transaction (the base64 wire transaction of the SVM
 * payload) and compares it with the accepts entry it pays, before the buyer sends it: the one
 * `TransferChecked` (SPL Token or Token-2022) must move exactly `amount` of `asset` from ATA(payer) to
 * ATA(payTo), signed by the payer; the fee payer (account 0) must be the entry's `extra.feePayer`; a memo the
 * seller fixed (`extra.memo`) must be the one carried. Whoever built the transaction — Treasury's pay endpoint
 * or the official `@x402/svm` client with a local key — is checked the same way (x402-signed-payment.ts).
 *
 * Defends against: sending a transaction that pays another payee, token or amount than the entry chosen, one
 * the payer did not sign, or one that lets another fee payer (or the payer itself) pay the fees; a transaction
 * whose accounts come from address lookup tables (the exact shape has none: nothing hidden).
 * Does not defend against: the seller's facilitator refusing a well-formed transaction (expired blockhash,
 * compute-budget bounds it enforces); a payment the payer's balance cannot cover (the chain refuses it).
 */
import {
  address,
  getAddressEncoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getProgramDerivedAddress,
  getTransactionDecoder,
  type Address,
  type ReadonlyUint8Array,
} from '@solana/kit';
import type { PaymentRequirements } from '../x402/wire-schemas.js';

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
/** SPL Token's `TransferChecked` instruction: discriminator 12, amount (u64 LE), decimals (u8). */
const TRANSFER_CHECKED = 12;

/** The transfer an x402 exact Solana transaction makes. */
export interface SvmExactTransfer {
  feePayer: string;
  tokenProgram: string;
  source: string;
  mint: string;
  destination: string;
  /** The transfer's authority: the payer. */
  authority: string;
  amount: string;
  memo: string | undefined;
  /** Whether the authority's signature slot is filled. */
  authoritySigned: boolean;
}

/** ATA(owner, mint) under `tokenProgram`, as the Associated Token Account program derives it. */
export async function associatedTokenAccount(owner: string, mint: string, tokenProgram: string): Promise<string> {
  const encoder = getAddressEncoder();
  const [ata] = await getProgramDerivedAddress({
    programAddress: address(ASSOCIATED_TOKEN_PROGRAM),
    seeds: [encoder.encode(address(owner)), encoder.encode(address(tokenProgram)), encoder.encode(address(mint))],
  });
  return ata;
}

/** The transfer of a base64 wire transaction; throws (with a reason) when it is not the exact shape's. */
export function readSvmExactTransfer(transactionBase64: string): SvmExactTransfer {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(transactionBase64));
  return readSvmExactMessage(tx.messageBytes, tx.signatures as Record<string, ReadonlyUint8Array | null>);
}

/**
 * The transfer of a compiled transaction message (what a signer is handed), with the signatures so far;
 * throws (with a reason) when it is not the exact shape's.
 */
export function readSvmExactMessage(
  messageBytes: ReadonlyUint8Array,
  signatures: Readonly<Record<string, ReadonlyUint8Array | null>> = {},
): SvmExactTransfer {
  const message = getCompiledTransactionMessageDecoder().decode(messageBytes);
  if ('addressTableLookups' in message && (message.addressTableLookups?.length ?? 0) > 0)
    throw new Error('accounts from address lookup tables');
  const accounts: readonly Address[] = message.staticAccounts;
  const transfers = message.instructions.filter((ix) => {
    const program = accounts[ix.programAddressIndex];
    return (program === TOKEN_PROGRAM || program === TOKEN_2022_PROGRAM) && ix.data?.[0] === TRANSFER_CHECKED;
  });
  const transfer = transfers[0];
  if (transfers.length !== 1 || !transfer?.data || transfer.data.length !== 10)
    throw new Error('not exactly one TransferChecked');
  const [source, mint, destination, authority] = (transfer.accountIndices ?? []).map((i) => accounts[i]);
  if (!source || !mint || !destination || !authority) throw new Error('a TransferChecked without its accounts');
  const amount = new DataView(Uint8Array.from(transfer.data).buffer, 1, 8).getBigUint64(0, true);
  const memo = message.instructions.find((ix) => accounts[ix.programAddressIndex] === MEMO_PROGRAM);
  const signature = signatures[authority];
  return {
    feePayer: accounts[0]!,
    tokenProgram: accounts[transfer.programAddressIndex]!,
    source,
    mint,
    destination,
    authority,
    amount: amount.toString(),
    memo: memo?.data ? new TextDecoder().decode(Uint8Array.from(memo.data)) : undefined,
    authoritySigned: signature !== null && signature !== undefined && signature.some((b) => b !== 0),
  };
}

/**
 * What differs between `transfer` and `requirements` (empty when it pays exactly that entry), `payer` being the
 * address expected to pay when the caller knows it.
 */
export async function svmTransferProblems(
  transfer: SvmExactTransfer,
  requirements: PaymentRequirements,
  payer: string | undefined,
): Promise<string[]> {
  const problems: string[] = [];
  if (requirements.scheme !== 'exact') problems.push('scheme');
  if (transfer.mint !== requirements.asset) problems.push('asset');
  if (transfer.amount !== requirements.amount) problems.push('amount');
  if (transfer.destination !== (await associatedTokenAccount(requirements.payTo, transfer.mint, transfer.tokenProgram)))
    problems.push('payee');
  if (transfer.source !== (await associatedTokenAccount(transfer.authority, transfer.mint, transfer.tokenProgram)))
    problems.push('source');
  if (payer !== undefined && transfer.authority !== payer) problems.push('payer');
  if (!transfer.authoritySigned) problems.push('signature');
  const feePayer = requirements.extra?.feePayer;
  if (transfer.feePayer !== feePayer || transfer.feePayer === transfer.authority) problems.push('fee payer');
  const memo = requirements.extra?.memo;
  if (typeof memo === 'string' && memo !== '' && transfer.memo !== memo) problems.push('memo');
  return problems;
}
