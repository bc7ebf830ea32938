/**
 * The opaque key references of the PKCS#11 backend: `p11:v1:acct:<base64url>` (an account key wrapped by
 * the root KEK), `p11:v1:wal:<base64url>` (a secp256k1 wallet DEK wrapped by its account key) and
 * `p11:v1:ed25519:<base64url>` (the 16-byte CKA_ID of an Ed25519 wallet key kept as a token object, see
 * ./ed25519-token-keys.ts). The front stores them and hands them back; they are ciphertext or an object
 * id, never key material. The prefix names the curve, so a reference says what it is.
 *
 * Protects against: one blob having several names — only the canonical unpadded base64url spelling is
 * accepted, and tombstones are keyed on the SHA-256 of the blob itself, not of the string, so a destroyed
 * key cannot come back re-spelled or under the other prefix. Size limits bound what reaches the HSM.
 * Known limits: a reference says nothing about which account it belongs to; the HSM's unwrap integrity
 * check (AES key wrap) is what refuses a blob presented with the wrong account key.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { SignerFault } from '../../signer-error.js';

export type KeyRefKind = 'acct' | 'wal' | 'ed25519';

export interface DecodedKeyRef {
  kind: KeyRefKind;
  blob: Buffer;
  /** hex SHA-256 of the wrapped blob (or of the Ed25519 CKA_ID): cache and tombstone key. */
  blobHash: string;
}

const REF_PATTERN = /^p11:v1:(acct|wal|ed25519):([A-Za-z0-9_-]+)$/;
const MIN_BLOB = 16;
const MAX_BLOB = 1024;
/** The CKA_ID of an Ed25519 wallet key: 16 random bytes. */
export const ED25519_ID_BYTES = 16;

export function encodeKeyRef(kind: KeyRefKind, blob: Buffer): string {
  return `p11:v1:${kind}:${blob.toString('base64url')}`;
}

/**
 * References decoded recently (every signature names two): parsing, base64url round trip and SHA-256 are
 * pure, so a reference seen before is not decoded again. Entries are frozen objects shared by callers;
 * their blob is only ever read (handed to C_UnwrapKey), never written.
 */
const decoded = new LRUCache<string, Readonly<DecodedKeyRef>>({ max: 10_000 });

/** A blob's cache and tombstone key: the hex SHA-256 of the wrapped key (or of an Ed25519 key's CKA_ID). */
export const blobHash = (blob: Buffer): string => createHash('sha256').update(blob).digest('hex');

/** Parses any PKCS#11 key reference (either kind), refusing non-canonical encodings. */
export function decodeKeyRef(ref: string): Readonly<DecodedKeyRef> {
  const known = decoded.get(ref);
  if (known) return known;
  const match = REF_PATTERN.exec(ref);
  if (!match) throw new SignerFault('key_not_found', 'not a PKCS#11 key reference');
  const encoded = match[2]!;
  const blob = Buffer.from(encoded, 'base64url');
  const kind = match[1] as KeyRefKind;
  const sized =
    kind === 'ed25519' ? blob.length === ED25519_ID_BYTES : blob.length >= MIN_BLOB && blob.length <= MAX_BLOB;
  if (!sized || blob.toString('base64url') !== encoded) {
    throw new SignerFault('key_not_found', 'malformed key reference');
  }
  const result = Object.freeze({
    kind,
    blob,
    blobHash: blobHash(blob),
  });
  decoded.set(ref, result);
  return result;
}

/** The blob's hash of a wallet reference of either curve (its tombstone's key); undefined for anything else. */
export function walletBlobHash(ref: string): string | undefined {
  try {
    const decoded = decodeKeyRef(ref);
    return decoded.kind === 'acct' ? undefined : decoded.blobHash;
  } catch {
    return undefined;
  }
}
