/**
 * `attest_wallet_policy` (docs/adr/0012-owner-signed-policies.md): a receipt, signed by the wallet's own key, of what
 * the signer holds for the wallet now — its signed policy's version, hash and date, its policy authority, the signer's
 * time, and the owner's nonce (./policy-receipt-statement.ts builds the text). Every path from the owner to the signer
 * runs through the API; the receipt is the one answer the API relays that it cannot make up: the owner already knows
 * the wallet's address (every document they sign names it), so a receipt that recovers to it (an EVM wallet's) or
 * verifies under it (a Solana wallet's), with the nonce they just chose, is the signer's word.
 *
 * Defends: an API that withholds a newer, tighter document and says it applied it, or answers `get_wallet_policy`'s
 * figures from its own copy (the receipt shows the version the signer holds; the CLI compares it with the last one the
 * owner signed); an old receipt replayed (the nonce); a receipt the wallet's key did not sign, or signed by another
 * key than the address's (checked here as every signature is before it leaves — an EVM one recovered,
 * ../ecdsa/finalize-signature.ts, an Ed25519 one verified strictly under the address's key,
 * ../solana/ed25519-signature.ts — `address_mismatch` otherwise); a receipt for an address whose key the signer does
 * not know it holds (`key_not_found`, rule `unknown_wallet`: by what it knows already — made or paid here, or recorded
 * under its account — no probe); the key signing anything that could be taken for a transaction, EIP-712 data or a
 * sign-in: an EVM wallet's key signs an EIP-191 personal message of a fixed-form text; a Solana wallet's Ed25519 key
 * signs only a Solana off-chain message of it (../solana/policy-receipt-message.ts: bytes that always begin with
 * the `\xffsolana offchain` signing domain, which no transaction message does, under Treasury's receipt application
 * domain, the wallet the one required signatory); a reader of the wallet blocking its payments by asking for
 * receipts: a receipt's cost, one HSM/KMS signature, counts in the wallet's own receipt ceilings only
 * (`wallet_receipts_minute` / `_hour`, TREASURY_SIGNER_WALLET_RECEIPTS_PER_*), never in the signature and amount
 * ceilings its payments and permits count in, and is given back if it does not leave; a key whose destroy started
 * signs none (`key_destroyed`).
 * Does not defend: anything after `signer_time` (a receipt is the state when it was made, not later); a verifier that
 * takes the API's word for the wallet's address (the owner's check uses the address the owner signed for); many
 * wallets' receipts together taking the HSM/KMS's sign rate from every tenant's payments (the API bounds receipts per
 * account: its `receipt` rate-limit bucket).
 */
import { hashMessage, hexToBytes } from 'viem';
import { aaddress } from '../assert.js';
import type { SignatureKind } from '../limits/wallet-limiter.js';
import type { AttestWalletPolicyParams, AttestWalletPolicyResult } from '../protocol/owner-policy-protocol.js';
import { solanaPublicKey } from '../solana/ed25519-signature.js';
import { policyReceiptMessage } from '../solana/policy-receipt-message.js';
import type { OwnerPolicies } from './owner-policies.js';
import { policyReceiptStatement } from './policy-receipt-statement.js';

/**
 * One signature as the wallet's receipt ceilings count it (its address, no amount, its key) and the digest it signs
 * with the wallet's key references.
 */
export interface ReceiptSignature {
  address: string;
  amount: bigint;
  /** Always `receipt`: the ceilings it counts in are the receipt ceilings (../limits/wallet-limiter.ts). */
  kind: Extract<SignatureKind, 'receipt'>;
  walletKeyRef: string;
  account_key_ref: string;
  wallet_key_ref: string;
  digest: Uint8Array;
}

/**
 * Takes the wallet's receipt ceilings for the signature, signs its digest with the wallet's key and checks it recovers
 * to the address (the signer service's own signing path), giving the ceilings back if it does not leave.
 */
export type ReceiptSigning = (signature: ReceiptSignature) => Promise<{ signature: string }>;

/** One Solana wallet's signature as its ceilings count it, and the off-chain message bytes its Ed25519 key signs. */
export interface ReceiptEd25519Signature extends Omit<ReceiptSignature, 'digest'> {
  /** A Solana off-chain message (../solana/policy-receipt-message.ts): it begins with the signing domain. */
  message: Uint8Array;
}

/**
 * Takes the wallet's receipt ceilings for the signature, signs the message with the wallet's Ed25519 key and verifies
 * it under the address's public key (the signer service's own Ed25519 path), giving the ceilings back if it does not
 * leave; the signature in base58.
 */
export type ReceiptEd25519Signing = (signature: ReceiptEd25519Signature) => Promise<{ signature: string }>;

/** The signer service's signing paths a receipt uses: an EVM wallet's digest, a Solana wallet's off-chain message. */
export interface ReceiptSigners {
  digest: ReceiptSigning;
  ed25519: ReceiptEd25519Signing;
}

export async function attestWalletPolicy(
  params: AttestWalletPolicyParams,
  owner: OwnerPolicies,
  nowSeconds: number,
  sign: ReceiptSigners,
): Promise<AttestWalletPolicyResult> {
  const solana = !params.address.startsWith('0x');
  if (solana) solanaPublicKey(params.address, 'address');
  else aaddress(params.address, 'address');
  await owner.assertHeld(params.address);
  const held = await owner.get(params.address);
  const statement = policyReceiptStatement({
    wallet: params.address,
    held,
    signerTime: nowSeconds,
    nonce: params.nonce,
  });
  const key = params.wallet_key;
  const taken = {
    address: params.address,
    amount: 0n,
    kind: 'receipt' as const,
    walletKeyRef: key.wallet_key_ref,
    ...key,
  };
  if (solana) {
    const message = policyReceiptMessage(statement, params.address);
    const { signature } = await sign.ed25519({ ...taken, message });
    return { scheme: 'solana_offchain', statement, signature };
  }
  const digest = hexToBytes(hashMessage(statement));
  const { signature } = await sign.digest({ ...taken, digest });
  return { scheme: 'eip191', statement, signature };
}
