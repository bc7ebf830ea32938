/**
 * `attest_wallet_policy` (docs/adr/0012-owner-signed-policies.md): a receipt, signed by the wallet's own key, of what
 * the signer holds for the wallet now — its signed policy's version, hash and date, its policy authority, the signer's
 * time, and the owner's nonce (./policy-receipt-statement.ts builds the text). Every path from the owner to the signer
 * runs through the API; the receipt is the one answer the API relays that it cannot make up: the owner already knows
 * the wallet's address (every document they sign names it), so a receipt that recovers to it, with the nonce they
 * just chose, is the signer's word.
 *
 * Defends: an API that withholds a newer, tighter document and says it applied it, or answers `get_wallet_policy`'s
 * figures from its own copy (the receipt shows the version the signer holds; the CLI compares it with the last one the
 * owner signed); an old receipt replayed (the nonce); a receipt the wallet's key did not sign, or signed by another
 * key than the address's (recovered here as every signature is: ../ecdsa/finalize-signature.ts, `address_mismatch`);
 * a receipt for an address whose key the signer does not know it holds (`key_not_found`, rule `unknown_wallet`: by
 * what it knows already — made or paid here, or recorded under its account — no probe); the key signing anything that
 * could be taken for a transaction, EIP-712 data or a sign-in (EIP-191 personal message of a fixed-form text). Its
 * cost, one HSM/KMS signature, counts as one signature of no amount in the wallet's rolling signature ceilings
 * (`wallet_signatures_minute` / `_hour`, as an EIP-2612 permit does), and is given back if it does not leave; a key
 * whose destroy started signs none (`key_destroyed`).
 * Does not defend: anything after `signer_time` (a receipt is the state when it was made, not later); a Solana wallet
 * — the signer has no domain-separated Ed25519 message path for free text yet, so it refuses (`invariant_violation`,
 * rule `key_curve`) rather than have the key sign bytes that could be read as something else.
 */
import { hashMessage, hexToBytes } from 'viem';
import { aaddress } from '../assert.js';
import type { AttestWalletPolicyParams, AttestWalletPolicyResult } from '../protocol/owner-policy-protocol.js';
import { SignerFault } from '../signer-error.js';
import type { OwnerPolicies } from './owner-policies.js';
import { policyReceiptStatement } from './policy-receipt-statement.js';

/**
 * One signature as the wallet's ceilings count it (its address, no amount, its key) and the digest it signs with the
 * wallet's key references.
 */
export interface ReceiptSignature {
  address: string;
  amount: bigint;
  walletKeyRef: string;
  account_key_ref: string;
  wallet_key_ref: string;
  digest: Uint8Array;
}

/**
 * Takes the wallet's ceilings for the signature, signs its digest with the wallet's key and checks it recovers to the
 * address (the signer service's own signing path), giving the ceilings back if it does not leave.
 */
export type ReceiptSigning = (signature: ReceiptSignature) => Promise<{ signature: string }>;

export async function attestWalletPolicy(
  params: AttestWalletPolicyParams,
  owner: OwnerPolicies,
  nowSeconds: number,
  sign: ReceiptSigning,
): Promise<AttestWalletPolicyResult> {
  if (!params.address.startsWith('0x')) {
    throw new SignerFault(
      'invariant_violation',
      'no policy receipt is signed with a Solana wallet key: the signer has no off-chain message path for Ed25519 keys',
      { rule: 'key_curve' },
    );
  }
  aaddress(params.address, 'address');
  await owner.assertHeld(params.address);
  const held = await owner.get(params.address);
  const statement = policyReceiptStatement({
    wallet: params.address,
    held,
    signerTime: nowSeconds,
    nonce: params.nonce,
  });
  const digest = hexToBytes(hashMessage(statement));
  const key = params.wallet_key;
  const { signature } = await sign({
    address: params.address,
    amount: 0n,
    walletKeyRef: key.wallet_key_ref,
    ...key,
    digest,
  });
  return { scheme: 'eip191', statement, signature };
}
