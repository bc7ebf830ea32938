/**
 * Test data builder: the message of a valid x402 `exact` payment on Solana devnet, as the official client
 * builds it (v0; SetComputeUnitLimit 20,000, SetComputeUnitPrice 1, TransferChecked of devnet USDC from
 * ATA(wallet) to ATA(payTo) with the wallet as authority, a memo; the facilitator pays the fee). Override any
 * part; `instructions` replaces the list outright. Built with @solana/kit and the @solana-program helpers.
 */
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  blockhash,
  compileTransactionMessage,
  createNoopSigner,
  createTransactionMessage,
  getCompiledTransactionMessageEncoder,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { findAssociatedTokenPda, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';

export const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
export const MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
export const DEVNET_USDC = address('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
export const MAINNET_USDC = address('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
export const FEE_PAYER = address('4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T');
export const PAY_TO = address('2wmVCSfPxGPjrnMMn7rchp4uaeoTqN39mXFC2zhPdri9');
export const MEMO_PROGRAM = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const BLOCKHASH = blockhash('EtWTRABZaYq6iMfeYKouRu166VU2xqa1EtWTRABZaYq');

export interface PaymentParts {
  wallet: Address;
  feePayer?: Address;
  payTo?: Address;
  mint?: Address;
  tokenProgram?: Address;
  amount?: bigint;
  decimals?: number;
  authority?: Address;
  source?: Address;
  destination?: Address;
  /** Undefined entries are left out. */
  computeUnits?: number | undefined;
  microLamports?: bigint | undefined;
  memo?: string | undefined;
  /** Appended after the memo. */
  extra?: Instruction[];
  /** Replaces every instruction (the other parts then only feed `transfer`). */
  instructions?: (transfer: Instruction) => Instruction[];
  version?: 0 | 'legacy';
}

export async function associatedTokenAccount(
  owner: Address,
  mint: Address = DEVNET_USDC,
  tokenProgram: Address = TOKEN_PROGRAM_ADDRESS,
) {
  return (await findAssociatedTokenPda({ owner, mint, tokenProgram }))[0];
}

export function memoInstruction(text: string | Uint8Array, accounts: Address[] = []): Instruction {
  return {
    programAddress: MEMO_PROGRAM,
    accounts: accounts.map((a) => ({ address: a, role: AccountRole.READONLY })),
    data: typeof text === 'string' ? new TextEncoder().encode(text) : text,
  };
}

/** The payment's TransferChecked instruction. */
export async function transferInstruction(p: PaymentParts): Promise<Instruction> {
  const mint = p.mint ?? DEVNET_USDC;
  const tokenProgram = p.tokenProgram ?? TOKEN_PROGRAM_ADDRESS;
  return getTransferCheckedInstruction(
    {
      source: p.source ?? (await associatedTokenAccount(p.wallet, mint, tokenProgram)),
      mint,
      destination: p.destination ?? (await associatedTokenAccount(p.payTo ?? PAY_TO, mint, tokenProgram)),
      authority: createNoopSigner(p.authority ?? p.wallet),
      amount: p.amount ?? 10_000n,
      decimals: p.decimals ?? 6,
    },
    { programAddress: tokenProgram },
  ) as Instruction;
}

/** The compiled message (for tests that edit it before encoding). */
export async function compiledPayment(p: PaymentParts) {
  const transfer = await transferInstruction(p);
  const has = (key: keyof PaymentParts) => !(key in p) || p[key] !== undefined;
  const instructions = p.instructions
    ? p.instructions(transfer)
    : [
        ...(has('computeUnits') ? [getSetComputeUnitLimitInstruction({ units: p.computeUnits ?? 20_000 })] : []),
        ...(has('microLamports') ? [getSetComputeUnitPriceInstruction({ microLamports: p.microLamports ?? 1n })] : []),
        transfer,
        ...(has('memo') ? [memoInstruction(p.memo ?? '0123456789abcdef0123456789abcdef')] : []),
        ...(p.extra ?? []),
      ];
  const empty = setTransactionMessageFeePayer(
    p.feePayer ?? FEE_PAYER,
    createTransactionMessage({ version: (p.version ?? 0) as 0 }) /* 'legacy' too, at run time */,
  );
  const timed = setTransactionMessageLifetimeUsingBlockhash(
    { blockhash: BLOCKHASH, lastValidBlockHeight: 1000n },
    empty,
  );
  return compileTransactionMessage(appendTransactionMessageInstructions(instructions, timed));
}

export const encodeCompiled = (m: Parameters<ReturnType<typeof getCompiledTransactionMessageEncoder>['encode']>[0]) =>
  new Uint8Array(getCompiledTransactionMessageEncoder().encode(m));

/** The message bytes of the payment. */
export async function paymentMessage(p: PaymentParts): Promise<Uint8Array> {
  return encodeCompiled(await compiledPayment(p));
}
