/**
 * The offline chain's USDC mint and faucet. The mint is written at devnet's USDC address (an SPL Token
 * mint, 6 decimals, no mint authority: only this faucet, which writes accounts directly, creates USDC).
 * The faucet airdrops SOL and credits USDC to an owner's associated token account, creating that account
 * (rent-exempt) when it does not exist yet; crediting 0 only creates it (an x402 payee's ATA must exist).
 * Defends against: a credit overflowing u64 (the balance or the supply), amounts outside 0..10^15 base units.
 * Does not: authenticate anyone (it is an in-process function of a development chain).
 */
import type { Address } from '@solana/kit';
import type { LocalSvm } from './local-svm.js';
import { LOCAL_USDC_MINT, USDC_DECIMALS } from './solana-devnet.js';
import {
  associatedTokenAddress,
  decodeMint,
  decodeTokenAccount,
  encodeMint,
  encodeTokenAccount,
  MINT_SIZE,
  TOKEN_ACCOUNT_SIZE,
  TOKEN_PROGRAM,
} from './spl-token-layouts.js';

/** 10^9 USDC: more than any test needs, far from u64's limit. */
export const MAX_FAUCET_USDC_UNITS = 1_000_000_000_000_000n;
const U64_MAX = 2n ** 64n - 1n;

export interface SolanaFaucet {
  /** Airdrops `lamports` to `address`; answers the airdrop's signature. */
  fundSol(address: Address, lamports: bigint): string;
  /** Credits `units` (6 decimals) to ATA(owner, USDC); answers the ATA and its new balance. */
  fundUsdc(owner: Address, units: bigint): Promise<{ tokenAccount: Address; balance: bigint }>;
}

function writeAccount(local: LocalSvm, address: Address, data: Uint8Array): void {
  local.svm.setAccount({
    address,
    data,
    executable: false,
    lamports: local.svm.minimumBalanceForRentExemption(BigInt(data.length)),
    programAddress: TOKEN_PROGRAM,
    space: BigInt(data.length),
  } as unknown as Parameters<LocalSvm['svm']['setAccount']>[0]);
}

/** Writes the USDC mint (supply 0) at devnet's USDC address. */
export function createUsdcMint(local: LocalSvm): Address {
  writeAccount(local, LOCAL_USDC_MINT, encodeMint({ mintAuthority: undefined, supply: 0n, decimals: USDC_DECIMALS }));
  return LOCAL_USDC_MINT;
}

function readMint(local: LocalSvm) {
  const account = local.svm.getAccount(LOCAL_USDC_MINT);
  if (!account.exists || account.data.length !== MINT_SIZE) throw new Error('the local USDC mint does not exist');
  return decodeMint(account.data);
}

async function fundUsdc(local: LocalSvm, owner: Address, units: bigint) {
  if (units < 0n || units > MAX_FAUCET_USDC_UNITS) throw new RangeError(`units must be 0..${MAX_FAUCET_USDC_UNITS}`);
  const tokenAccount = await associatedTokenAddress(owner, LOCAL_USDC_MINT);
  const existing = local.svm.getAccount(tokenAccount);
  const state = existing.exists ? decodeTokenAccount(existing.data) : undefined;
  if (
    existing.exists &&
    (existing.programAddress !== TOKEN_PROGRAM ||
      existing.data.length !== TOKEN_ACCOUNT_SIZE ||
      state?.mint !== LOCAL_USDC_MINT ||
      state.owner !== owner)
  )
    throw new Error(`${tokenAccount} exists and is not a USDC token account`);
  const mint = readMint(local);
  const balance = (state?.amount ?? 0n) + units;
  if (balance > U64_MAX || mint.supply + units > U64_MAX) throw new RangeError('credit overflows u64');
  writeAccount(local, tokenAccount, encodeTokenAccount({ mint: LOCAL_USDC_MINT, owner, amount: balance }));
  writeAccount(local, LOCAL_USDC_MINT, encodeMint({ ...mint, supply: mint.supply + units }));
  return { tokenAccount, balance };
}

export function createSolanaFaucet(local: LocalSvm): SolanaFaucet {
  return {
    fundSol: (address, lamports) => local.airdrop(address, lamports),
    fundUsdc: (owner, units) => fundUsdc(local, owner, units),
  };
}
