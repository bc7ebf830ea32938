/**
 * The associated token account of (owner, mint) under a token program: the Associated Token Account
 * program's PDA of seeds [owner, token program, mint] (kit's getProgramDerivedAddress), kept for the
 * `MAX_KEPT` triples used last. A derivation hashes the seeds and tests the result against the curve once per
 * bump it tries (about 0.7 ms of CPU here), and every payment derives two; the answer for a triple never
 * changes, so a kept one is the same account (test/unit/signer/associated-token-address.test.ts).
 *
 * Defends: a payment drawn from any token account but the wallet's own, or paid to any account but the
 * payee's (x402 `exact` pays ATA(payer) → ATA(payTo)); the memory a stream of new payees could take (least
 * recently used out).
 * Does not defend: whether the account exists on chain (the chain refuses the transfer if it does not).
 */
import { getProgramDerivedAddress, type Address } from '@solana/kit';
import { LRUCache } from 'lru-cache';
import { keyBytes } from '../protocol/solana-key.js';
import { ASSOCIATED_TOKEN_PROGRAM } from './solana-instructions.js';

/** Triples kept (about 200 bytes each). */
const MAX_KEPT = 10_000;

const kept = new LRUCache<string, Address>({ max: MAX_KEPT });

export async function associatedTokenAddress(owner: Address, mint: Address, tokenProgram: Address): Promise<Address> {
  // Base58 addresses hold no space: the key is one triple's alone.
  const key = `${owner} ${mint} ${tokenProgram}`;
  const known = kept.get(key);
  if (known !== undefined) return known;
  const [pda] = await getProgramDerivedAddress({
    programAddress: ASSOCIATED_TOKEN_PROGRAM,
    seeds: [keyBytes(owner), keyBytes(tokenProgram), keyBytes(mint)],
  });
  kept.set(key, pda);
  return pda;
}
