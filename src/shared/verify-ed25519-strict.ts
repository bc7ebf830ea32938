/**
 * Whether an Ed25519 signature proves that the holder of a public key signed a message, under RFC 8032's strict
 * rules (NIST FIPS 186-5): the signature is 64 bytes, the key 32 bytes that decode to a curve point with its y
 * below the field's prime, the key is not a point of small order, and @noble/curves verifies with
 * `{ zip215: false }` (canonical R and S encodings, the cofactorless equation). Every proof that "this address
 * signed" in the API goes through it: a seller's Solana pay-to claim (src/api/sellers/seller-pay-to-service.ts)
 * and Sign In With Solana (src/api/identity/siws-attestation.ts). The signer makes the same checks before a
 * signature leaves it (signer/solana/ed25519-signature.ts).
 *
 * Defends: an address nobody holds the key of being "proven" by a signature anyone can make. noble's default
 * (ZIP-215, meant for consensus) accepts a key of small order — the all-zero address
 * `11111111111111111111111111111111`, the identity point — with a signature whose R is the identity and S is 0,
 * over any message. Does not defend: what the message means, its freshness or its replay (the caller's).
 */
import { ed25519 } from '@noble/curves/ed25519.js';

/** True when `signature` is `publicKey`'s strict (RFC 8032) Ed25519 signature of `message`; false otherwise, never throws. */
export function verifyEd25519Strict(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    // noble's strict verify refuses a small-order key too; checked here by name, as the signer does.
    if (ed25519.Point.fromBytes(publicKey, false).isSmallOrder()) return false;
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    // A key that is no point, or an encoding noble refuses: no proof.
    return false;
  }
}
