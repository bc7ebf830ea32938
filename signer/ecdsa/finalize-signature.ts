/**
 * Turns a raw backend ECDSA signature into an Ethereum one — one routine for every backend (web3signer's
 * Eth1SignatureUtil shape): r‖s → low-S → yParity by trial recovery → the recovered address must be the
 * wallet's → v = 27 + yParity.
 *
 * The first signature of an address finds its public key by recovery and keccak (the address is the only
 * thing the front states); the key is then remembered (public data, LRU). Later signatures cost one
 * recovery and at most one verification instead of up to two recoveries and two keccaks: recovery id 0
 * gives the remembered key → yParity 0; else the signature must verify under that key → yParity 1 (of a
 * valid signature's two candidate points with x = r, the other one is R). A signature whose R.x ≥ n
 * (recovery ids 2 and 3, probability ≈ 2⁻¹²⁸; Ethereum's v cannot carry them) would be given v = 28 here.
 *
 * Protects against: high-S signatures (refused on chain), a wrong key answering for a wallet (a swapped
 * wrapped blob, a confused HSM), and HSM faults — nothing leaves unless it verifiably recovers to the
 * address the front stored for the wallet (else `address_mismatch`).
 * Known limits: the digest's meaning is the caller's business (the signer computes it from structured
 * EIP-3009 data); the digest must be exactly 32 bytes.
 */
import type { Hex } from 'viem';
import { abytes } from '../assert.js';
import { SignerFault } from '../signer-error.js';
import { normalizeLowS } from './normalize-low-s.js';
import { publicKeyToLowerCaseAddress } from './public-key-to-address.js';
import { recoverPublicKey } from './recover-public-key.js';
import { verifySignature } from './verify-signature.js';
import { LRUCache } from 'lru-cache';
import { equalBytes } from '@noble/curves/utils.js';

export interface EthereumSignature {
  /** r‖s‖v, 65 bytes. */
  signature: Hex;
  r: Hex;
  s: Hex;
  v: 27 | 28;
}

/** Lower-case address → its uncompressed public key, once a signature recovered to it (public data). */
const knownKeys = new LRUCache<string, Uint8Array>({ max: 10_000 });

/**
 * Remembers a new wallet's public key as its backend made it (the wallet's address is derived from this key), so
 * its first signature costs one recovery as later ones do.
 */
export function rememberWalletKey(uncompressed: Uint8Array): void {
  knownKeys.set(publicKeyToLowerCaseAddress(uncompressed), new Uint8Array(uncompressed));
}

/** r‖s‖v and its parts as 0x hex: one hex conversion of the 65 bytes, r and s sliced from it. */
function ethereumSignature(compact: Uint8Array, yParity: 0 | 1): EthereumSignature {
  const v = (27 + yParity) as 27 | 28;
  const out = Buffer.allocUnsafe(65);
  out.set(compact, 0);
  out[64] = v;
  const hex = out.toString('hex');
  return { signature: `0x${hex}`, r: `0x${hex.slice(0, 64)}`, s: `0x${hex.slice(64, 128)}`, v };
}

export function finalizeSignature(digest: Uint8Array, rawRS: Uint8Array, expectedAddress: string): EthereumSignature {
  abytes(digest, 32, 'digest');
  const compact = normalizeLowS(rawRS);
  const expected = expectedAddress.toLowerCase();
  const known = knownKeys.get(expected);
  if (known) {
    const recovered = recoverPublicKey(compact, 0, digest);
    if (recovered && equalBytes(recovered, known)) return ethereumSignature(compact, 0);
    if (verifySignature(compact, digest, known)) return ethereumSignature(compact, 1);
  } else {
    for (const yParity of [0, 1] as const) {
      const recovered = recoverPublicKey(compact, yParity, digest);
      if (recovered && publicKeyToLowerCaseAddress(recovered) === expected) {
        knownKeys.set(expected, recovered);
        return ethereumSignature(compact, yParity);
      }
    }
  }
  throw new SignerFault('address_mismatch', 'the signature does not recover to the wallet address');
}
