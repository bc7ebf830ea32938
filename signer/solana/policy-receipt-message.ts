/**
 * A Solana wallet's policy receipt as its Ed25519 key signs it (../owner-policy/policy-receipts.ts): the Solana
 * off-chain message of the receipt's statement (policy/policy-receipt-offchain-message.ts: version 0, UTF-8 text,
 * Treasury's receipt application domain, the wallet its one required signatory), encoded by @solana/kit's off-chain
 * message encoder, then signed through the backend's Ed25519 path and verified under the wallet's public key before
 * it leaves (./ed25519-signature.ts: RFC 8032 strict, as every Solana signature the signer returns).
 *
 * Defends: the wallet key signing anything but an off-chain message (the bytes must begin with the `\xffsolana
 * offchain` signing domain, which no transaction message does — checked after encoding and again right before
 * signing); a signature by another key than the address's (`address_mismatch`, never returned); a key of the other
 * curve or of another account answered as `sign_solana_transaction` answers it (./ed25519-account-key.ts).
 * Does not defend: what the statement says (../owner-policy/policy-receipt-statement.ts builds it); the wallet's
 * ceilings and a destroyed key (the service's `signTaken` around this).
 */
import {
  address,
  getBase58Decoder,
  getOffchainMessageEncoder,
  offchainMessageApplicationDomain,
  offchainMessageContentUtf8Of1232BytesMax,
} from '@solana/kit';
import {
  hasOffchainSigningDomain,
  POLICY_RECEIPT_APPLICATION_DOMAIN,
  POLICY_RECEIPT_OFFCHAIN_VERSION,
} from '../../policy/policy-receipt-offchain-message.js';
import type { KeyBackend } from '../backends/key-backend.js';
import { asWalletKeyOfAccount } from '../ecdsa/secp256k1-account-key.js';
import { SignerFault } from '../signer-error.js';
import { signEd25519OfAccount } from './ed25519-account-key.js';
import { assertEd25519Signature, solanaPublicKey } from './ed25519-signature.js';

const encoder = getOffchainMessageEncoder();
const base58 = getBase58Decoder();
const applicationDomain = offchainMessageApplicationDomain(POLICY_RECEIPT_APPLICATION_DOMAIN);

/** What is signed: the wallet's key references, its base58 address, and the off-chain message bytes. */
export interface ReceiptMessageTarget {
  account_key_ref: string;
  wallet_key_ref: string;
  address: string;
  message: Uint8Array;
}

/** The off-chain message bytes of `statement` for the Solana wallet `wallet`: the same inputs give the same bytes. */
export function policyReceiptMessage(statement: string, wallet: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(
      encoder.encode({
        version: POLICY_RECEIPT_OFFCHAIN_VERSION,
        applicationDomain,
        requiredSignatories: [{ address: address(wallet) }],
        content: offchainMessageContentUtf8Of1232BytesMax(statement),
      }),
    );
  } catch (err) {
    throw new SignerFault(
      'internal_error',
      'the receipt statement does not fit a Solana off-chain message',
      undefined,
      {
        cause: err,
      },
    );
  }
  if (!hasOffchainSigningDomain(bytes))
    throw new SignerFault('internal_error', 'a receipt message must begin with the off-chain signing domain');
  return bytes;
}

/**
 * `target`'s message signed with the wallet's Ed25519 key (the backend asked at once, synchronously up to its first
 * await: the caller has just taken the wallet's ceilings) and verified under the address's key; the signature in
 * base58. Refuses before anything is signed when the bytes are not an off-chain message.
 */
export function receiptMessageSigning(backend: KeyBackend, target: ReceiptMessageTarget) {
  const { account_key_ref: account, wallet_key_ref: wallet, message } = target;
  const publicKey = solanaPublicKey(target.address, 'address');
  if (!hasOffchainSigningDomain(message))
    throw new SignerFault('internal_error', 'a receipt is signed only as a Solana off-chain message');
  return async (): Promise<{ signature: string }> => {
    const signature = await signEd25519OfAccount(backend, account, wallet, message).catch((err: unknown) =>
      Promise.reject(asWalletKeyOfAccount(err)),
    );
    assertEd25519Signature(signature, message, publicKey);
    return { signature: base58.decode(signature) };
  };
}
