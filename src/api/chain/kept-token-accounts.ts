/**
 * The associated token accounts of (owner, mint) under SPL Token and Token-2022
 * (../../x402/seller/svm-payment.ts derives them), kept for the `MAX_KEPT` (owner, mint, program) triples used
 * last. Each derivation hashes its seeds and tests the result against the curve once per bump it tries (about
 * 0.8 ms of CPU here, in JavaScript); a Solana payment's message names two (the wallet's and the payee's), a
 * balance read the wallet's, a settlement report derives a payee's two, and a ledger check a seller's two for each
 * proven pay-to address, for every row. The account of a triple never changes, so a kept answer is the derived one.
 *
 * Defends: the CPU of deriving the same accounts for every payment, balance read, report and ledger row; the memory a stream of
 * new payees could take (least recently used out). Does not defend: whether the accounts exist (the chain's
 * balances say what moved; a transfer to a missing account fails its simulation).
 */
import type { Address } from '@solana/kit';
import { LRUCache } from 'lru-cache';
import { associatedTokenAccount, TOKEN_PROGRAMS } from '../../x402/seller/svm-payment.js';

/** Triples kept (one address each). */
const MAX_KEPT = 20_000;

const kept = new LRUCache<string, Address>({ max: MAX_KEPT });

/** ATA(owner, mint) under `program`, derived once. */
export async function keptTokenAccount(owner: string, mint: string, program: Address): Promise<Address> {
  // Base58 addresses hold no space: the key is one triple's alone.
  const key = `${owner} ${mint} ${program}`;
  const known = kept.get(key);
  if (known !== undefined) return known;
  const account = await associatedTokenAccount(owner, mint, program);
  kept.set(key, account);
  return account;
}

/** ATA(owner, mint) under SPL Token, then under Token-2022. */
export async function keptTokenAccounts(owner: string, mint: string): Promise<readonly string[]> {
  return Object.freeze(await Promise.all(TOKEN_PROGRAMS.map((program) => keptTokenAccount(owner, mint, program))));
}
