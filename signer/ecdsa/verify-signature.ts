/**
 * ECDSA verification of a low-S compact signature over a 32-byte digest against a known uncompressed
 * secp256k1 public key: native libsecp256k1 when it loads (about half the cost of a recovery), else
 * @noble/curves. Used to settle yParity once recovery id 0 did not give the wallet's key.
 *
 * Protects against: nothing by itself; a pure function. Known limits: high-S signatures verify as false
 * (both libraries); callers normalise first.
 */
import { secp256k1 as noble } from '@noble/curves/secp256k1.js';
import { nativeSecp256k1 as native } from './native-secp256k1.js';

export function verifySignature(compact: Uint8Array, digest: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    if (native) return native.ecdsaVerify(compact, digest, publicKey);
    return noble.verify(compact, digest, publicKey, { prehash: false, lowS: true });
  } catch {
    return false;
  }
}
