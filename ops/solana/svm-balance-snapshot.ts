/**
 * The lamport and SPL token balances of a transaction's static accounts, taken before and after it runs:
 * what `getTransaction` answers as `preBalances`/`postBalances` and `preTokenBalances`/`postTokenBalances`,
 * the fields a wallet service's ledger checks read.
 * Defends against: nothing; it reads the in-process chain.
 * Does not: see accounts loaded through address lookup tables (the x402 exact transaction uses none), nor
 * Token-2022 accounts (the local USDC is an SPL Token mint).
 */
import type { Address } from '@solana/kit';
import type { LiteSVM } from 'litesvm';
import { decodeMint, decodeTokenAccount, TOKEN_PROGRAM } from './spl-token-layouts.js';

export interface RpcTokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: RpcTokenAmount;
}

export interface RpcTokenAmount {
  amount: string;
  decimals: number;
  uiAmount: number;
  uiAmountString: string;
}

export interface BalanceSnapshot {
  lamports: bigint[];
  tokens: RpcTokenBalance[];
}

/** `amount` base units with `decimals` decimals, in the RPC's `uiTokenAmount` shape. */
export function tokenAmount(amount: bigint, decimals: number): RpcTokenAmount {
  const scale = 10n ** BigInt(decimals);
  const fraction = (amount % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  const uiAmountString = `${amount / scale}${fraction ? `.${fraction}` : ''}`;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

/** The decimals of `mint` on the chain (undefined when it is no SPL mint). */
export function mintDecimals(svm: LiteSVM, mint: Address): number | undefined {
  const account = svm.getAccount(mint);
  if (!account.exists || account.programAddress !== TOKEN_PROGRAM) return undefined;
  try {
    return decodeMint(account.data).decimals;
  } catch {
    return undefined;
  }
}

function tokenBalanceOf(svm: LiteSVM, address: Address, accountIndex: number): RpcTokenBalance | undefined {
  const account = svm.getAccount(address);
  if (!account.exists || account.programAddress !== TOKEN_PROGRAM) return undefined;
  const state = decodeTokenAccount(account.data);
  const decimals = state === undefined ? undefined : mintDecimals(svm, state.mint);
  if (state === undefined || decimals === undefined) return undefined;
  return {
    accountIndex,
    mint: state.mint,
    owner: state.owner,
    programId: TOKEN_PROGRAM,
    uiTokenAmount: tokenAmount(state.amount, decimals),
  };
}

export function snapshotBalances(svm: LiteSVM, accounts: readonly Address[]): BalanceSnapshot {
  const tokens: RpcTokenBalance[] = [];
  const lamports = accounts.map((address, index) => {
    const token = tokenBalanceOf(svm, address, index);
    if (token) tokens.push(token);
    return svm.getBalance(address) ?? 0n;
  });
  return { lamports, tokens };
}
