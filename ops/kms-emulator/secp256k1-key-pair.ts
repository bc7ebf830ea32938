/**
 * The KMS emulator's secp256k1 maths, all of it done by @noble/curves (signing, verifying, key
 * generation) and Node's KeyObject (the SubjectPublicKeyInfo DER encoding): nothing hand-rolled here.
 *
 * It behaves like AWS KMS on an ECC_SECG_P256K1 key, not like an Ethereum wallet:
 * - signatures are DER `SEQUENCE{INTEGER r, INTEGER s}` (69–72 bytes);
 * - they are NOT normalised to low-S (`lowS: false`): about half of them are high-S, as KMS's are, so
 *   a client that forgets EIP-2 normalisation fails here as it would in production;
 * - they are randomised (`extraEntropy`), so signing the same digest twice gives two signatures, as
 *   KMS does (it does not use RFC 6979 deterministic nonces);
 * - the public key is returned as the 88-byte DER SPKI (id-ecPublicKey, secp256k1, uncompressed point).
 *
 * What it does not defend: the private key is a plain byte array in this process's memory. This is a
 * TEST DOUBLE; anyone who can read the process memory has every key.
 */
import { createHash, createPublicKey } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';

export interface Secp256k1KeyPair {
  readonly kind: 'secp256k1';
  /** 32-byte secret scalar: never leaves the emulator's process. */
  readonly secretKey: Uint8Array;
  /** 65-byte uncompressed point 04‖X‖Y. */
  readonly publicKey: Uint8Array;
  /** The point wrapped as DER SubjectPublicKeyInfo, as KMS GetPublicKey returns it. */
  readonly spki: Uint8Array;
}

export function generateSecp256k1KeyPair(): Secp256k1KeyPair {
  const secretKey = secp256k1.utils.randomSecretKey();
  const publicKey = secp256k1.getPublicKey(secretKey, false);
  return { kind: 'secp256k1', secretKey, publicKey, spki: encodeSpki(publicKey) };
}

/** DER SubjectPublicKeyInfo of an uncompressed secp256k1 point, encoded by Node's KeyObject. */
function encodeSpki(publicKey: Uint8Array): Uint8Array {
  const x = Buffer.from(publicKey.subarray(1, 33)).toString('base64url');
  const y = Buffer.from(publicKey.subarray(33, 65)).toString('base64url');
  const key = createPublicKey({ key: { kty: 'EC', crv: 'secp256k1', x, y }, format: 'jwk' });
  return new Uint8Array(key.export({ type: 'spki', format: 'der' }));
}

/** The 32 bytes KMS signs: the digest itself for DIGEST, SHA-256 of the message for RAW. */
export function messageToDigest(message: Uint8Array, messageType: 'RAW' | 'DIGEST'): Uint8Array {
  return messageType === 'DIGEST' ? message : new Uint8Array(createHash('sha256').update(message).digest());
}

/** A DER ECDSA signature over a 32-byte digest, random nonce, high-S left as it comes (like KMS). */
export function signDigestDer(digest: Uint8Array, secretKey: Uint8Array): Uint8Array {
  return secp256k1.sign(digest, secretKey, { prehash: false, lowS: false, format: 'der', extraEntropy: true });
}

/** True when `der` is a valid DER signature of `digest` by `publicKey`; high-S accepted, as KMS does. */
export function verifyDigestDer(der: Uint8Array, digest: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return secp256k1.verify(der, digest, publicKey, { prehash: false, lowS: false, format: 'der' });
  } catch {
    return false;
  }
}
