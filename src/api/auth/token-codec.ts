/**
 * Bearer token minting and hashing. Tokens are 256-bit random values behind a type prefix; only their
 * SHA-256 is stored (a high-entropy secret needs no slow hash). Identifiers (not secrets) are time-ordered
 * hex over the pooled CSPRNG output of ./random-hex.ts.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { timeOrderedHex } from './time-ordered-hex.js';

export const TOKEN_PREFIXES = {
  pat: 'xx_pat_',
  api_key: 'xx_treasury_sk_',
  session: 'as_',
  legacy_seller_key: 'xx_live_sk_',
} as const;

export function generateToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  // One-shot: no Hash object per bearer (the pay path hashes one per request).
  return hash('sha256', token, 'hex');
}

/** Constant-time comparison of two SHA-256 hex digests (a presented secret's, hashed once, and a stored one). */
export function hashesEqual(actualHashHex: string, expectedHashHex: string): boolean {
  const a = Buffer.from(actualHashHex, 'hex');
  const b = Buffer.from(expectedHashHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** `prefix` + 24 hex digits, time-ordered (./time-ordered-hex.ts): a row's primary key grows at its index's right edge. */
export function generateId(prefix: string): string {
  return prefix + timeOrderedHex(24);
}
