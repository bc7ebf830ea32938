/**
 * KMS's GetPublicKey answers a DER SubjectPublicKeyInfo (RFC 5280); the signer wants the uncompressed
 * SEC1 point 0x04‖X‖Y (65 bytes) of a secp256k1 key, or the raw 32 bytes of an Ed25519 key (RFC 8410). Parsed by node:crypto (OpenSSL), which also checks the point is on the
 * curve, then read back as a JWK: no hand-rolled ASN.1.
 *
 * Protects against: a key of another curve or type being taken for a wallet key (the JWK must say EC
 * secp256k1, or OKP Ed25519), and truncated or padded coordinates (each must be exactly 32 bytes).
 * Known limits: says nothing about who holds the private half; KMS's KeySpec and the address check on
 * every signature do.
 */
import { createPublicKey } from 'node:crypto';
import { SignerFault } from '../../signer-error.js';

function spkiToJwk(spki: Uint8Array): { kty?: string; crv?: string; x?: string; y?: string } {
  try {
    return createPublicKey({
      key: Buffer.from(spki.buffer, spki.byteOffset, spki.byteLength),
      format: 'der',
      type: 'spki',
    }).export({ format: 'jwk' });
  } catch {
    throw new SignerFault('hsm_error', 'the key backend returned a public key that is not a DER SubjectPublicKeyInfo');
  }
}

/** The raw 32-byte Ed25519 public key of an SPKI (KMS answers 44 bytes, OID 1.3.101.112). */
export function spkiToEd25519PublicKey(spki: Uint8Array): Uint8Array {
  const jwk = spkiToJwk(spki);
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string')
    throw new SignerFault('hsm_error', 'the key backend returned a public key that is not Ed25519');
  const x = Buffer.from(jwk.x, 'base64url');
  if (x.length !== 32) throw new SignerFault('hsm_error', 'the key backend returned a malformed Ed25519 public key');
  return new Uint8Array(x);
}

export function spkiToUncompressedPoint(spki: Uint8Array): Uint8Array {
  const jwk = spkiToJwk(spki);
  if (jwk.kty !== 'EC' || jwk.crv !== 'secp256k1' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
    throw new SignerFault('hsm_error', 'the key backend returned a public key that is not secp256k1');
  }
  const x = Buffer.from(jwk.x, 'base64url');
  const y = Buffer.from(jwk.y, 'base64url');
  if (x.length !== 32 || y.length !== 32)
    throw new SignerFault('hsm_error', 'the key backend returned a malformed secp256k1 public key');
  const point = new Uint8Array(65);
  point[0] = 0x04;
  point.set(x, 1);
  point.set(y, 33);
  return point;
}
