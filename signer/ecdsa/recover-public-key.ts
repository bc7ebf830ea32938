/**
 * Public-key recovery for a compact secp256k1 signature and a recovery id, used to find yParity (the HSM
 * and KMS return none). Native libsecp256k1 (`secp256k1` npm, prebuilt) when it loads — ≈13,800/s against
 * noble's ≈570/s, which would cap the whole sign pipeline near 400/s (measured on SoftHSM 2.6.1) — else
 * @noble/curves.
 *
 * Protects against: nothing by itself; it is a pure function. Callers compare the result with the
 * expected wallet address before a signature leaves the signer.
 * Known limits: returns null when no point recovers (invalid for that recovery id); both libraries agree.
 */
import { secp256k1 as noble } from '@noble/curves/secp256k1.js';
import { nativeSecp256k1 as native } from './native-secp256k1.js';

/** Which implementation recovers keys in this process ('native' expected; logged at start). */
export const RECOVERY_IMPLEMENTATION: 'native' | 'noble' = native ? 'native' : 'noble';

export function recoverPublicKey(compact: Uint8Array, recoveryId: 0 | 1, digest: Uint8Array): Uint8Array | null {
  try {
    if (native) return native.ecdsaRecover(compact, recoveryId, digest, false);
    return noble.Signature.fromBytes(compact, 'compact')
      .addRecoveryBit(recoveryId)
      .recoverPublicKey(digest)
      .toBytes(false);
  } catch {
    return null;
  }
}
