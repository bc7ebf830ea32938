/**
 * The associated token account of (owner, mint) under a token program: the Associated Token Account
 * program's PDA of seeds [owner, token program, mint] (kit's getProgramDerivedAddress).
 *
 * Defends: a payment drawn from any token account but the wallet's own, or paid to any account but the
 * payee's (x402 `exact` pays ATA(payer) → ATA(payTo)).
 * Does not defend: whether the account exists on chain (the chain refuses the transfer if it does not).
 */
import { getAddressEncoder, getProgramDerivedAddress, type Address } from '@solana/kit';
import { ASSOCIATED_TOKEN_PROGRAM } from './solana-instructions.js';

const addressEncoder = getAddressEncoder();

export async function associatedTokenAddress(owner: Address, mint: Address, tokenProgram: Address): Promise<Address> {
  const [pda] = await getProgramDerivedAddress({
    programAddress: ASSOCIATED_TOKEN_PROGRAM,
    seeds: [addressEncoder.encode(owner), addressEncoder.encode(tokenProgram), addressEncoder.encode(mint)],
  });
  return pda;
}
