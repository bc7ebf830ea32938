/**
 * Low-S normalisation of a raw 64-byte r‖s ECDSA signature over secp256k1: s > n/2 becomes n − s.
 *
 * Protects against: high-S signatures, which Ethereum (EIP-2) and USDC's ECRecover refuse; SoftHSM
 * returns high-S about half the time. Also refuses r or s outside [1, n) (a faulty HSM or KMS answer)
 * before anything else looks at them. The range checks and the subtraction work on the 32-byte big-endian
 * words themselves (comparison with n and n/2, one borrow chain for n − s): on every signature of the sign
 * path, parsing both words into bigints and serialising them back cost more than the rest of this function
 * (docs/performance.md, "The signer through its socket, round two"). Unit tests compare it with noble's
 * Signature (hasHighS, normalizeS) on random and boundary values. No curve arithmetic happens here.
 * Known limits: input must already be r‖s; a DER answer (AWS KMS) is parsed by its backend first.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { abytes } from '../assert.js';
import { SignerFault } from '../signer-error.js';

const N = secp256k1.Point.CURVE().n;
const word = (value: bigint) => Uint8Array.from(Buffer.from(value.toString(16).padStart(64, '0'), 'hex'));
/** The group order n and ⌊n/2⌋ as 32-byte big-endian words. */
const N_WORD = word(N);
const HALF_N_WORD = word(N >> 1n);

/** Compares the 32-byte big-endian word of `bytes` at `offset` with `limit`: negative, zero or positive. */
function compareWord(bytes: Uint8Array, offset: number, limit: Uint8Array): number {
  for (let i = 0; i < 32; i++) {
    const d = bytes[offset + i]! - limit[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

function isZeroWord(bytes: Uint8Array, offset: number): boolean {
  for (let i = 0; i < 32; i++) if (bytes[offset + i] !== 0) return false;
  return true;
}

/** 0 < word < n. */
function inRange(bytes: Uint8Array, offset: number): boolean {
  return !isZeroWord(bytes, offset) && compareWord(bytes, offset, N_WORD) < 0;
}

export function normalizeLowS(rawRS: Uint8Array): Uint8Array {
  abytes(rawRS, 64, 'raw signature');
  if (!inRange(rawRS, 0) || !inRange(rawRS, 32))
    throw new SignerFault('hsm_error', 'the key backend returned a signature with r or s out of range');
  const out = new Uint8Array(rawRS);
  if (compareWord(rawRS, 32, HALF_N_WORD) <= 0) return out;
  // s > n/2: s := n − s, byte by byte from the least significant, with a borrow (s < n, so no underflow).
  let borrow = 0;
  for (let i = 31; i >= 0; i--) {
    const d = N_WORD[i]! - rawRS[32 + i]! - borrow;
    borrow = d < 0 ? 1 : 0;
    out[32 + i] = d & 0xff;
  }
  return out;
}
