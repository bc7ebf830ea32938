/**
 * Turns a raw backend ECDSA signature into an Ethereum one — one routine for every backend (web3signer's
 * Eth1SignatureUtil shape): r‖s → low-S → yParity by trial recovery → the recovered address must be the
 * wallet's → v = 27 + yParity.
 *
 * Protects against: high-S signatures (refused on chain), a wrong key answering for a wallet (a swapped
 * wrapped blob, a confused HSM), and HSM faults — nothing leaves unless it verifiably recovers to the
 * address the front stored for the wallet (else `address_mismatch`).
 * Known limits: the digest's meaning is the caller's business (the signer computes it from structured
 * EIP-3009 data); the digest must be exactly 32 bytes.
 */
import { bytesToHex, type Hex } from 'viem';
import { abytes } from '../assert.js';
import { SignerFault } from '../signer-error.js';
import { normalizeLowS } from './normalize-low-s.js';
import { publicKeyToLowerCaseAddress } from './public-key-to-address.js';
import { recoverPublicKey } from './recover-public-key.js';

export interface EthereumSignature {
  /** r‖s‖v, 65 bytes. */
  signature: Hex;
  r: Hex;
  s: Hex;
  v: 27 | 28;
}

export function finalizeSignature(digest: Uint8Array, rawRS: Uint8Array, expectedAddress: string): EthereumSignature {
  abytes(digest, 32, 'digest');
  const compact = normalizeLowS(rawRS);
  const expected = expectedAddress.toLowerCase();
  for (const yParity of [0, 1] as const) {
    const recovered = recoverPublicKey(compact, yParity, digest);
    if (recovered && publicKeyToLowerCaseAddress(recovered) === expected) {
      const v = (27 + yParity) as 27 | 28;
      const out = new Uint8Array(65);
      out.set(compact, 0);
      out[64] = v;
      return { signature: bytesToHex(out), r: bytesToHex(compact.subarray(0, 32)), s: bytesToHex(compact.subarray(32, 64)), v };
    }
  }
  throw new SignerFault('address_mismatch', 'the signature does not recover to the wallet address');
}
