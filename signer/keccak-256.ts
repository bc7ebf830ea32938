/**
 * Keccak-256 (Ethereum's hash, the original padding, not SHA3-256): OpenSSL's through `node:crypto` where Node's
 * OpenSSL offers it (3.2 and later: the Node 24 of the images), else @noble/hashes (Node 20). The signer hashes
 * each EIP-712 message and its envelope with it before every signature: about 12 µs a call in JavaScript against
 * 1–2 µs in OpenSSL (docs/performance.md, "Keccak-256 from Node's own crypto").
 *
 * Protects against: nothing by itself; a pure function. test/unit/signer/keccak-256.test.ts holds the answer to
 * published vectors and to @noble/hashes over every length up to three blocks, under whichever implementation
 * the running Node gives (CI runs it on Node 20 and on the images' Node 24).
 * Known limits: the implementation is chosen once, at load.
 */
import { createHash, getHashes } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';

/** Which implementation hashes in this process: 'openssl' on Node 24, '@noble/hashes' on Node 20. */
export const KECCAK_256_IMPLEMENTATION: 'openssl' | '@noble/hashes' = getHashes().includes('keccak-256')
  ? 'openssl'
  : '@noble/hashes';

function opensslKeccak256(data: Uint8Array): Uint8Array {
  return createHash('keccak-256').update(data).digest();
}

/** Keccak-256 of `data`: 32 bytes. */
export const keccak256: (data: Uint8Array) => Uint8Array =
  KECCAK_256_IMPLEMENTATION === 'openssl' ? opensslKeccak256 : keccak_256;
