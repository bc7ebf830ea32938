/**
 * Reads the transfer out of an x402 `exact` Solana transaction (the base64 wire transaction of the SVM
 * payload) and compares it with the accepts entry it pays, before the buyer sends it: the one
 * `TransferChecked` (SPL Token or Token-2022) must move exactly `amount` of `asset` from ATA(payer) to
 * ATA(payTo), signed by the payer; the fee payer (account 0) must be the entry's `extra.feePayer`; a memo the
 * seller fixed (`extra.memo`) must be the one carried. Whoever built the transaction — Treasury's pay endpoint
 * or the official `@x402/svm` client with a local key — is checked the same way (x402-signed-payment.ts); a
 * signer handed a message (the CLI's keystore signer) reads it with `readSvmExactPayment` first: the shape, and
 * the transfer's own rules as Treasury's signer holds them — from ATA(payer, mint, program) (`transfer_source`),
 * with 6 decimals (`transfer_decimals`: USDC's).
 *
 * A message is read only when it is exactly the x402 exact shape, the rule Treasury's signer applies
 * (signer/solana/check-x402-exact-message.ts, mirrored here: the SDK ships to buyers and may not import the
 * signer): in its canonical encoding, no address lookup tables, no account listed twice, exactly two signers
 * (the fee payer and the payer), and no instruction but at most one SetComputeUnitLimit and one
 * SetComputeUnitPrice (no accounts), exactly one TransferChecked with its four accounts, and at most one Memo
 * (no accounts, 1 to 256 bytes of UTF-8); the transfer's authority is a signer and appears in no other
 * account slot. The compute-budget values are not bounded here: the fee payer pays them, not the payer.
 *
 * Defends against: sending a transaction that pays another payee, token or amount than the entry chosen, one
 * the payer did not sign, or one that lets another fee payer (or the payer itself) pay the fees; a message
 * that does more than the one transfer — an SPL Approve or CloseAccount of the payer's token account, a System
 * transfer of its SOL, a durable nonce, a second signer — passing as a payment because it also holds one (a
 * signer that reads it refuses it whole); accounts from address lookup tables (the exact shape has none:
 * nothing hidden).
 * Does not defend against: the seller's facilitator refusing a well-formed transaction (expired blockhash,
 * compute-budget bounds it enforces); a payment the payer's balance cannot cover (the chain refuses it).
 */
import {
  address,
  getAddressEncoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getProgramDerivedAddress,
  getTransactionDecoder,
  type Address,
  type CompiledTransactionMessage,
  type ReadonlyUint8Array,
} from '@solana/kit';
import type { PaymentRequirements } from '../x402/wire-schemas.js';

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
/** SPL Token's `TransferChecked` instruction: discriminator 12, amount (u64 LE), decimals (u8). */
const TRANSFER_CHECKED = 12;
/** Compute Budget's SetComputeUnitLimit (2, u32) and SetComputeUnitPrice (3, u64), by their data length. */
const COMPUTE_BUDGET_LENGTHS: ReadonlyMap<number, number> = new Map([
  [2, 5],
  [3, 9],
]);
/** The decimals of the USD stablecoins a signer pays in (Treasury's signer: SOLANA_MINT_DECIMALS). */
export const SVM_EXACT_DECIMALS = 6;
/** A memo's most bytes (the official client's bound, and Treasury's signer's). */
const MAX_MEMO_BYTES = 256;
const utf8 = new TextDecoder('utf-8', { fatal: true });

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
  /** The decimals the TransferChecked states (the mint's, or the chain refuses it). */
  decimals: number;
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

/** An instruction with its program and accounts as addresses. */
interface ResolvedInstruction {
  program: Address;
  accounts: Address[];
  data: Uint8Array;
}

/** The message, when its bytes are its one canonical encoding, names every account itself and has two signers. */
function decodeExactMessage(messageBytes: ReadonlyUint8Array): CompiledTransactionMessage {
  const message = getCompiledTransactionMessageDecoder().decode(messageBytes);
  const again = getCompiledTransactionMessageEncoder().encode(message);
  if (again.length !== messageBytes.length || again.some((b, i) => b !== messageBytes[i]))
    throw new Error('a message not in its canonical encoding');
  if ('addressTableLookups' in message && (message.addressTableLookups?.length ?? 0) > 0)
    throw new Error('accounts from address lookup tables');
  if (new Set(message.staticAccounts).size !== message.staticAccounts.length)
    throw new Error('an account listed twice');
  if (message.header.numSignerAccounts !== 2) throw new Error('not exactly two signers (the fee payer and the payer)');
  return message;
}

function resolveInstructions(message: CompiledTransactionMessage): ResolvedInstruction[] {
  const at = (index: number): Address => {
    const found = message.staticAccounts[index];
    if (found === undefined) throw new Error(`account index ${index} outside the message's accounts`);
    return found;
  };
  return message.instructions.map((ix) => ({
    program: at(ix.programAddressIndex),
    accounts: (ix.accountIndices ?? []).map(at),
    data: Uint8Array.from(ix.data ?? []),
  }));
}

/**
 * The one TransferChecked and the memo, if any, of an x402 exact message; throws when any instruction is
 * something else (only compute budget, one TransferChecked, at most one memo).
 */
function exactInstructions(ixs: readonly ResolvedInstruction[]): {
  transfer: ResolvedInstruction;
  memo: ResolvedInstruction | undefined;
} {
  const budget = new Set<number>();
  const transfers: ResolvedInstruction[] = [];
  const memos: ResolvedInstruction[] = [];
  for (const ix of ixs) {
    if (ix.program === COMPUTE_BUDGET_PROGRAM) {
      const kind = ix.data[0] ?? -1;
      if (ix.accounts.length > 0 || COMPUTE_BUDGET_LENGTHS.get(kind) !== ix.data.length || budget.has(kind))
        throw new Error('a compute-budget instruction other than one unit limit and one unit price');
      budget.add(kind);
    } else if (ix.program === TOKEN_PROGRAM || ix.program === TOKEN_2022_PROGRAM) transfers.push(ix);
    else if (ix.program === MEMO_PROGRAM) memos.push(ix);
    else throw new Error(`an instruction of program ${ix.program}, not part of an x402 exact payment`);
  }
  const transfer = transfers[0];
  if (transfers.length !== 1 || transfer?.data[0] !== TRANSFER_CHECKED || transfer.data.length !== 10)
    throw new Error('not exactly one TransferChecked');
  if (transfer.accounts.length !== 4) throw new Error('a TransferChecked without exactly its four accounts');
  const memo = memos[0];
  if (memos.length > 1) throw new Error('more than one memo');
  if (memo && (memo.accounts.length > 0 || memo.data.length < 1 || memo.data.length > MAX_MEMO_BYTES))
    throw new Error(`a memo with accounts or not 1 to ${MAX_MEMO_BYTES} bytes`);
  return { transfer, memo };
}

/** A memo's text; throws when its bytes are not UTF-8 (the Memo program refuses them too). */
function memoText(memo: ResolvedInstruction): string {
  try {
    return utf8.decode(memo.data);
  } catch {
    throw new Error('a memo that is not UTF-8');
  }
}

/**
 * The transfer of a compiled transaction message (what a signer is handed), with the signatures so far;
 * throws (with a reason) when it is not exactly the x402 exact shape (see the header).
 */
export function readSvmExactMessage(
  messageBytes: ReadonlyUint8Array,
  signatures: Readonly<Record<string, ReadonlyUint8Array | null>> = {},
): SvmExactTransfer {
  const message = decodeExactMessage(messageBytes);
  const accounts: readonly Address[] = message.staticAccounts;
  const ixs = resolveInstructions(message);
  const { transfer, memo } = exactInstructions(ixs);
  const [source, mint, destination, authority] = transfer.accounts as [Address, Address, Address, Address];
  if (accounts.indexOf(authority) >= message.header.numSignerAccounts)
    throw new Error("the transfer's authority is not a signer");
  const elsewhere = ixs.some((ix) => ix.accounts.some((a, i) => a === authority && !(ix === transfer && i === 3)));
  if (elsewhere) throw new Error("the transfer's authority appears in another account slot");
  const amount = new DataView(transfer.data.buffer, transfer.data.byteOffset + 1, 8).getBigUint64(0, true);
  const signature = signatures[authority];
  return {
    feePayer: accounts[0]!,
    tokenProgram: transfer.program,
    source,
    mint,
    destination,
    authority,
    amount: amount.toString(),
    decimals: transfer.data[9]!,
    memo: memo ? memoText(memo) : undefined,
    authoritySigned: signature !== null && signature !== undefined && signature.some((b) => b !== 0),
  };
}

/**
 * The transfer of a message a signer is handed, read as Treasury's signer reads it: exactly the x402 exact shape
 * (readSvmExactMessage), from the payer's own associated token account for the mint under the transfer's token
 * program, with SVM_EXACT_DECIMALS decimals; throws (with a reason) otherwise.
 */
export async function readSvmExactPayment(
  messageBytes: ReadonlyUint8Array,
  signatures: Readonly<Record<string, ReadonlyUint8Array | null>> = {},
): Promise<SvmExactTransfer> {
  const transfer = readSvmExactMessage(messageBytes, signatures);
  if (transfer.decimals !== SVM_EXACT_DECIMALS) throw new Error(`decimals other than ${SVM_EXACT_DECIMALS}`);
  if (transfer.source !== (await associatedTokenAccount(transfer.authority, transfer.mint, transfer.tokenProgram)))
    throw new Error("a source other than the payer's associated token account");
  return transfer;
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
