/**
 * The EIP-55 Ethereum address of an uncompressed secp256k1 public key (keccak-256 of X‖Y, last 20 bytes).
 *
 * Protects against: compressed or malformed keys being hashed into a plausible-looking address — the
 * input must be exactly 65 bytes starting with 0x04.
 * Known limits: does not check the point is on the curve; keys come from the HSM or from recovery.
 */
import { keccak256 } from '../keccak-256.js';
import { bytesToHex, getAddress, type Address } from 'viem';
import { abytes } from '../assert.js';
import { SignerFault } from '../signer-error.js';

/** The address in lower case, without the EIP-55 checksum (one keccak fewer: for comparisons). */
export function publicKeyToLowerCaseAddress(uncompressed: Uint8Array): Address {
  abytes(uncompressed, 65, 'public key');
  if (uncompressed[0] !== 0x04)
    throw new SignerFault('internal_error', 'public key must be uncompressed (0x04 prefix)');
  return bytesToHex(keccak256(uncompressed.subarray(1)).subarray(12));
}

export function publicKeyToAddress(uncompressed: Uint8Array): Address {
  return getAddress(publicKeyToLowerCaseAddress(uncompressed));
}
