/**
 * The Ed25519 side of a key backend, and the check every Ed25519 signature passes before it leaves the
 * signer: it must verify (RFC 8032, strict encodings) under the wallet's public key — the 32 bytes its base58
 * address spells — over the exact message bytes the checks decoded.
 *
 * The signature is verified by OpenSSL (node:crypto, about 0.1 ms here, against 1.4 ms for the same check in
 * JavaScript); the public key is first decoded by @noble/curves as RFC 8032 strict verification decodes it (its
 * y below the field's prime, not a point of small order), once per key (`MAX_KEYS` kept, least recently used
 * out). OpenSSL refuses a non-canonical `s` and, comparing R's encoding, a non-canonical R; the key's checks are
 * the ones it does not make (test/unit/signer/ed25519-signature.test.ts holds both against noble's strict verify).
 *
 * Defends: a wrong key answering for a wallet (a swapped reference, a confused HSM) and HSM faults — a
 * signature that does not verify is `address_mismatch` and never returned (as ../ecdsa/finalize-signature.ts
 * does for ECDSA).
 * Does not defend: what the message means (./check-x402-exact-message.ts).
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { LRUCache } from 'lru-cache';
import type { KeyBackend } from '../backends/key-backend.js';
import { SignerFault } from '../signer-error.js';
import { isSolanaKey, keyBytes } from '../protocol/solana-key.js';

/** Public keys kept decoded and checked. */
const MAX_KEYS = 10_000;
const keys = new LRUCache<string, KeyObject>({ max: MAX_KEYS });

/**
 * The wallet's Ed25519 public key from its base58 address; `invalid_request` unless the address is the one
 * spelling of 32 bytes (so that no two spellings name one key, to the ceilings keyed by address among others).
 */
export function solanaPublicKey(address: string, name: string): Uint8Array {
  if (!isSolanaKey(address)) throw new SignerFault('invalid_request', `${name} is not a 32-byte base58 address`);
  return keyBytes(address);
}

/**
 * The backend's Ed25519 signing (it refuses a key of the other curve), called synchronously up to its own first
 * await: the caller has just taken the wallet's ceilings.
 */
export function signEd25519(
  backend: KeyBackend,
  accountKeyRef: string,
  walletKeyRef: string,
  message: Uint8Array,
): Promise<Uint8Array> {
  return backend.signEd25519(accountKeyRef, walletKeyRef, message);
}

/** Throws `address_mismatch` unless `signature` is a valid Ed25519 signature of `message` by `publicKey`. */
export function assertEd25519Signature(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): void {
  let valid = false;
  try {
    valid = signature.length === 64 && verify(null, message, verifyingKey(publicKey), signature);
  } catch {
    valid = false;
  }
  if (!valid) throw new SignerFault('address_mismatch', "the signature does not verify under the wallet's public key");
}

/** `publicKey` as OpenSSL's key, once it decoded strictly to a point not of small order (else throws). */
function verifyingKey(publicKey: Uint8Array): KeyObject {
  const x = Buffer.from(publicKey).toString('base64url');
  let key = keys.get(x);
  if (key === undefined) {
    if (ed25519.Point.fromBytes(publicKey, false).isSmallOrder()) throw new Error('a public key of small order');
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    keys.set(x, key);
  }
  return key;
}
