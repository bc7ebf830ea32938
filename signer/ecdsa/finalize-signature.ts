/**
 * Turns a raw HSM/KMS ECDSA signature into an Ethereum one, for every backend (web3signer's
 * Eth1SignatureUtil shape): parse r‖s → normalise to low-S (libsecp256k1 `signatureNormalize`) → find the
 * recovery id by trial recovery → require that it recovers to the wallet's address → v = 27 + yParity.
 *
 * Defends: high-S signatures (USDC's ECRecover reverts on them), a wrong key answering for a wallet, and
 * HSM faults — nothing leaves unless it verifiably recovers to the expected address.
 * Does not defend: the digest's meaning; the caller computed it from structured data.
 */
import secp256k1 from 'secp256k1';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, getAddress } from 'viem';
import { abytes } from '../assert.js';
import { SignerFault } from '../signer-error.js';

export interface EthereumSignature {
  signature: `0x${string}`;
  r: `0x${string}`;
  s: `0x${string}`;
  v: 27 | 28;
}

export function publicKeyToAddress(uncompressed: Uint8Array): `0x${string}` {
  abytes(uncompressed, 65, 'public key');
  if (uncompressed[0] !== 0x04) throw new SignerFault('internal_error', 'public key must be uncompressed (0x04 prefix)');
  return getAddress(bytesToHex(keccak_256(uncompressed.subarray(1)).subarray(12)));
}

export function finalizeSignature(digest: Uint8Array, rawRS: Uint8Array, expectedAddress: string): EthereumSignature {
  abytes(digest, 32, 'digest');
  abytes(rawRS, 64, 'raw signature');
  const sig = new Uint8Array(rawRS);
  secp256k1.signatureNormalize(sig);
  const expected = expectedAddress.toLowerCase();
  for (const recid of [0, 1] as const) {
    let recovered: Uint8Array;
    try {
      recovered = secp256k1.ecdsaRecover(sig, recid, digest, false);
    } catch {
      continue;
    }
    if (publicKeyToAddress(recovered).toLowerCase() === expected) {
      const v = (27 + recid) as 27 | 28;
      const out = new Uint8Array(65);
      out.set(sig, 0);
      out[64] = v;
      return { signature: bytesToHex(out), r: bytesToHex(sig.subarray(0, 32)), s: bytesToHex(sig.subarray(32, 64)), v };
    }
  }
  throw new SignerFault('address_mismatch', 'the signature does not recover to the wallet address');
}
