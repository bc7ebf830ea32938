/**
 * Low-S normalisation of a raw 64-byte r‖s ECDSA signature over secp256k1: s > n/2 becomes n − s.
 *
 * Protects against: high-S signatures, which Ethereum (EIP-2) and USDC's ECRecover refuse; SoftHSM
 * returns high-S about half the time. Also refuses r or s outside [1, n) (a faulty HSM or KMS answer)
 * before anything else looks at them, via noble's Signature parser — no hand-rolled curve arithmetic.
 * Known limits: input must already be r‖s; a DER answer (AWS KMS) is parsed by its backend first.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { abytes } from '../assert.js';
import { SignerFault } from '../signer-error.js';

const Signature = secp256k1.Signature;
const N = secp256k1.Point.CURVE().n;

export function normalizeLowS(rawRS: Uint8Array): Uint8Array {
  abytes(rawRS, 64, 'raw signature');
  let sig;
  try {
    sig = Signature.fromBytes(rawRS, 'compact');
  } catch {
    throw new SignerFault('hsm_error', 'the key backend returned a signature with r or s out of range');
  }
  if (!sig.hasHighS()) return new Uint8Array(rawRS);
  return new Signature(sig.r, N - sig.s).toBytes('compact');
}
