/**
 * The KMS emulator's Ed25519 maths, all of it Node's crypto (OpenSSL): key generation, RFC 8032
 * PureEdDSA signing and verifying, and the SubjectPublicKeyInfo encoding. Nothing hand-rolled here.
 *
 * It behaves like AWS KMS on an ECC_NIST_EDWARDS25519 key with ED25519_SHA_512 and MessageType RAW: the
 * signature is the raw 64 bytes over the message itself (deterministic, as Ed25519 is), and GetPublicKey
 * answers the 44-byte DER SPKI (OID 1.3.101.112) whose last 32 bytes are the public key.
 *
 * What it does not defend: the private key is a KeyObject in this process's memory. This is a TEST
 * DOUBLE; anyone who can read the process memory has every key.
 */
import { createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

export interface Ed25519KeyPair {
  readonly kind: 'ed25519';
  /** Never leaves the emulator's process. */
  readonly privateKey: KeyObject;
  /** The raw 32-byte public key. */
  readonly publicKey: Uint8Array;
  /** DER SubjectPublicKeyInfo (44 bytes), as KMS GetPublicKey returns it. */
  readonly spki: Uint8Array;
}

export function generateEd25519KeyPair(): Ed25519KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
  return { kind: 'ed25519', privateKey, publicKey: spki.slice(spki.length - 32), spki };
}

/** RFC 8032 Ed25519 over the message bytes: 64 bytes. */
export function signEd25519(message: Uint8Array, privateKey: KeyObject): Uint8Array {
  return new Uint8Array(sign(null, message, privateKey));
}

/** True when `signature` is a valid Ed25519 signature of `message` by the key of `spki`. */
export function verifyEd25519(signature: Uint8Array, message: Uint8Array, spki: Uint8Array): boolean {
  try {
    const key = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}
