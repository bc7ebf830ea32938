/**
 * The associated token accounts of (owner, mint) under SPL Token and Token-2022
 * (../../x402/seller/svm-payment.ts derives them), kept for the `MAX_KEPT` pairs used last. Each derivation hashes
 * its seeds and tests the result against the curve once per bump it tries (about 0.7 ms of CPU here); a settlement
 * report derives a payee's two, and a ledger check a seller's two for each proven pay-to address, for every row.
 * The accounts of a pair never change, so a kept answer is the derived one.
 *
 * Defends: the CPU of deriving the same accounts for every report and every ledger row; the memory a stream of
 * new payees could take (least recently used out). Does not defend: whether the accounts exist (the chain's
 * balances say what moved).
 */
import { LRUCache } from 'lru-cache';
import { associatedTokenAccounts } from '../../x402/seller/svm-payment.js';

/** Pairs kept (two addresses each). */
const MAX_KEPT = 10_000;

const kept = new LRUCache<string, readonly string[]>({ max: MAX_KEPT });

export async function keptTokenAccounts(owner: string, mint: string): Promise<readonly string[]> {
  // Base58 addresses hold no space: the key is one pair's alone.
  const key = `${owner} ${mint}`;
  const known = kept.get(key);
  if (known !== undefined) return known;
  const accounts = Object.freeze(await associatedTokenAccounts(owner, mint));
  kept.set(key, accounts);
  return accounts;
}
