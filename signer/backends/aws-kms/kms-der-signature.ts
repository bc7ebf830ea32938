/**
 * KMS answers an ECDSA signature as DER `SEQUENCE { INTEGER r, INTEGER s }` (69 to 72 bytes, r or s
 * sometimes shorter than 32 bytes); the KeyBackend contract wants raw r‖s, 64 bytes, not yet normalised
 * (low-S and the recovery id are ../../ecdsa/finalize-signature.ts's job, for every backend).
 *
 * Protects against: hand-rolled DER parsing — @noble/curves parses it strictly (no trailing bytes, no
 * non-minimal integers, r and s in [1, n)); anything else is `hsm_error`, never a signature.
 * Known limits: does not check the signature against a key; the signer's finalisation does (recovery to
 * the wallet's address).
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { SignerFault } from '../../signer-error.js';

/** Largest DER an ECDSA secp256k1 signature can take (2 + 2 × (2 + 33)). */
const MAX_DER_BYTES = 72;

export function derSignatureToCompact(der: Uint8Array): Uint8Array {
  if (!(der instanceof Uint8Array) || der.length < 8 || der.length > MAX_DER_BYTES) {
    throw new SignerFault('hsm_error', 'the key backend returned a signature that is not a DER ECDSA signature');
  }
  try {
    return secp256k1.Signature.fromBytes(der, 'der').toBytes('compact');
  } catch {
    throw new SignerFault('hsm_error', 'the key backend returned a malformed DER ECDSA signature');
  }
}
