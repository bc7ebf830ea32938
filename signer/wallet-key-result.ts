/**
 * The `create_wallet_key` result for a key a backend made: secp256k1 → the uncompressed public key and the
 * EIP-55 address; Ed25519 → the raw 32-byte public key and its base58 Solana address (@solana/kit's codec).
 *
 * Protects against: an address derived from the wrong encoding (each curve has one derivation here, checked
 * against the key's length).
 * Known limits: pure; says nothing about who holds the key (the backend does).
 */
import { getAddressDecoder } from '@solana/kit';
import { bytesToHex } from 'viem';
import type { CreatedWalletKey } from './backends/key-backend.js';
import { publicKeyToAddress } from './ecdsa/public-key-to-address.js';
import type { CreateWalletKeyResult } from './protocol/signer-protocol.js';
import { SignerFault } from './signer-error.js';

/** The wallet's address: EIP-55 for secp256k1, base58 for Ed25519. */
export function walletAddress(key: CreatedWalletKey): string {
  if (key.curve === 'secp256k1') return publicKeyToAddress(key.publicKey);
  if (key.publicKey.length !== 32) throw new SignerFault('hsm_error', 'an Ed25519 public key is not 32 bytes');
  return getAddressDecoder().decode(key.publicKey);
}

export function walletKeyResult(
  key: CreatedWalletKey,
  address: string,
  policyAuthority: CreateWalletKeyResult['policy_authority'],
): CreateWalletKeyResult {
  const publicKey = bytesToHex(key.publicKey);
  if (key.curve === 'ed25519')
    return {
      wallet_key_ref: key.walletKeyRef,
      curve: 'ed25519',
      public_key: publicKey,
      address,
      policy_authority: policyAuthority,
    };
  return { wallet_key_ref: key.walletKeyRef, public_key: publicKey, address, policy_authority: policyAuthority };
}
