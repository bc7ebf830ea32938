/**
 * Ed25519 wallet keys in the PKCS#11 token (docs/adr/0013-solana-keys.md). SoftHSM 2.6.1 cannot wrap or
 * unwrap Edwards keys, so an Ed25519 private key is a persistent token object — generated in the HSM with
 * CKM_EC_EDWARDS_KEY_PAIR_GEN, sensitive, never extractable, sign-only, not modifiable — found by a random
 * 16-byte CKA_ID (the wallet reference carries it) and bound to its account by its CKA_LABEL,
 * `treasury-ed25519:<SHA-256 of the account's wrapped key>`. The public half is a session object read once
 * for CKA_EC_POINT and destroyed.
 *
 * Protects against: the private key ever leaving the HSM (not even wrapped); a wallet reference used with
 * another account's reference (the label must name that account, checked on every lookup: `key_not_found`);
 * a label rewritten to move a key to another account (CKA_MODIFIABLE false).
 * Known limits: the binding is checked by this code, not enforced by the HSM: whoever holds the user PIN
 * can sign with every token object (as they can unwrap every wrapped key). Each key takes token storage
 * (capacity), and backing the keys up means backing the token up. A key's handle is remembered from its making,
 * and the token's keys from the start (`index`), up to TREASURY_SIGNER_KEY_CACHE_SIZE keys; a key past that is
 * searched for, and a search costs in proportion to the objects the token holds (about 30 µs an object on SoftHSM
 * 2.6.1). A token that can wrap Edwards keys (SoftHSM ≥ 2.7, PKCS#11 3.0 HSMs) could use the wrapped path of the
 * secp256k1 keys instead.
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import pkcs11js from 'pkcs11js';
import { SignerFault } from '../../signer-error.js';
import { ckrCode } from './ckr-error-map.js';
import { blobHash, ED25519_ID_BYTES, type DecodedKeyRef } from './pkcs11-key-ref.js';
import type { Pkcs11Module } from './pkcs11-module.js';

/** PKCS#11 3.0 numbers that pkcs11js 2.1.7 (2.40 headers) does not name. */
export const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;
export const CKM_EDDSA = 0x1057;
export const CKK_EC_EDWARDS = 0x40;
/** DER OID 1.3.101.112 (id-Ed25519). */
export const ED25519_EC_PARAMS = Buffer.from('06032b6570', 'hex');

const LABEL_PREFIX = 'treasury-ed25519:';

/** The label that binds an Ed25519 key to the account whose wrapped key hashes to `accountBlobHash`. */
export function ed25519Label(accountBlobHash: string): string {
  return `${LABEL_PREFIX}${accountBlobHash}`;
}

/** The public half: a session object, read once for CKA_EC_POINT. */
export const GENERATE_ED25519_PUBLIC_KEY: pkcs11js.Template = [
  { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
  { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
  { type: pkcs11js.CKA_EC_PARAMS, value: ED25519_EC_PARAMS },
  { type: pkcs11js.CKA_TOKEN, value: false },
  { type: pkcs11js.CKA_VERIFY, value: true },
];

/**
 * The private half's template as a session object (no id, no label, not on the token): what the start-up probe
 * (./token-qualification.ts) asks the token for, so it tries the very attributes the signer's keys carry.
 */
export function sessionEd25519PrivateKey(): pkcs11js.Template {
  const skipped = new Set<number>([pkcs11js.CKA_ID, pkcs11js.CKA_LABEL]);
  return generateEd25519PrivateKey(Buffer.alloc(0), '')
    .filter((a) => !skipped.has(a.type))
    .map((a) => (a.type === pkcs11js.CKA_TOKEN ? { ...a, value: false } : a));
}

/** The private half: a token object that signs and does nothing else, and never leaves the HSM. */
function generateEd25519PrivateKey(id: Buffer, label: string): pkcs11js.Template {
  return [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
    { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
    { type: pkcs11js.CKA_TOKEN, value: true },
    { type: pkcs11js.CKA_PRIVATE, value: true },
    { type: pkcs11js.CKA_SENSITIVE, value: true },
    { type: pkcs11js.CKA_EXTRACTABLE, value: false },
    { type: pkcs11js.CKA_MODIFIABLE, value: false },
    { type: pkcs11js.CKA_SIGN, value: true },
    { type: pkcs11js.CKA_DECRYPT, value: false },
    { type: pkcs11js.CKA_DERIVE, value: false },
    { type: pkcs11js.CKA_UNWRAP, value: false },
    { type: pkcs11js.CKA_ID, value: id },
    { type: pkcs11js.CKA_LABEL, value: label },
  ];
}

/** A remembered handle's key: the account the key is bound to and the hash of its CKA_ID (a reference's blobHash). */
const handleKey = (accountBlobHash: string, walletBlobHash: string) => `${accountBlobHash}:${walletBlobHash}`;

/** The account hash a label names, if it is one of this module's labels (prefix and 64 lowercase hex digits). */
function labelAccount(label: Buffer | undefined): string | undefined {
  const text = label instanceof Buffer ? label.toString('utf8') : undefined;
  if (text === undefined || !text.startsWith(LABEL_PREFIX)) return undefined;
  const account = text.slice(LABEL_PREFIX.length);
  return account.length === 64 && /^[0-9a-f]+$/.test(account) ? account : undefined;
}

/** CKA_EC_POINT of an Ed25519 key: DER OCTET STRING 04 20 ‖ 32 bytes. */
function rawPublicKey(point: Buffer | undefined): Uint8Array {
  if (!(point instanceof Buffer) || point.length !== 34 || point[0] !== 0x04 || point[1] !== 0x20)
    throw new SignerFault('hsm_error', 'unexpected CKA_EC_POINT encoding for an Ed25519 key');
  return new Uint8Array(point.subarray(2));
}

export class Ed25519TokenKeys {
  /**
   * Handles found, keyed by account and wallet: a handle found for account A never answers account B.
   * Token objects: an evicted entry destroys nothing.
   */
  private readonly handles: LRUCache<string, pkcs11js.Handle> | undefined;

  constructor(
    private readonly module: Pkcs11Module,
    /** The backend's holder session (synchronous calls only). */
    private readonly session: pkcs11js.Handle,
    cacheSize: number,
    /** Runs a search of the token, timed as the HSM operation `op` (the backend's metrics). */
    private readonly timed: <T>(op: string, fn: () => T) => T,
  ) {
    this.handles = cacheSize > 0 ? new LRUCache({ max: cacheSize }) : undefined;
  }

  /**
   * Generates a key pair bound to the account; returns its CKA_ID and raw public key. The private key's handle is
   * remembered, so the wallet's first signature does not search the token for the key this call just made.
   */
  generate(accountBlobHash: string): { id: Buffer; publicKey: Uint8Array } {
    const p11 = this.module.p11;
    const id = randomBytes(ED25519_ID_BYTES);
    const pair = p11.C_GenerateKeyPair(
      this.session,
      { mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN },
      GENERATE_ED25519_PUBLIC_KEY,
      generateEd25519PrivateKey(id, ed25519Label(accountBlobHash)),
    );
    try {
      const [point] = p11.C_GetAttributeValue(this.session, pair.publicKey, [{ type: pkcs11js.CKA_EC_POINT }]);
      const publicKey = rawPublicKey(point?.value);
      this.handles?.set(handleKey(accountBlobHash, blobHash(id)), pair.privateKey);
      return { id, publicKey };
    } catch (err) {
      // A key whose public half could not be read is never referenced: do not leave it in the token.
      this.destroy(pair.privateKey);
      throw err;
    } finally {
      this.destroy(pair.publicKey);
    }
  }

  /**
   * Remembers the handles of the Ed25519 wallet keys already in the token (at most as many as the cache holds), in
   * one search of the token and one read of each key's CKA_ID and CKA_LABEL — at start, so that after a restart a
   * wallet's first signature does not search the token again (a search costs in proportion to the objects the token
   * holds: on SoftHSM 2.6.1 about 30 µs an object, with the signer's main thread held). A key is remembered under
   * the account its label names, as `lookUp` would bind it; a CKA_ID two keys share, or a label of another form, is
   * left to `lookUp` (which refuses it). Returns how many it remembered.
   */
  index(): number {
    const handles = this.handles;
    if (handles === undefined) return 0;
    return this.timed('index_wallet_keys', () => this.remember(handles));
  }

  private remember(handles: LRUCache<string, pkcs11js.Handle>): number {
    const found = this.module.findObjects(this.session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
      { type: pkcs11js.CKA_TOKEN, value: true },
    ]);
    const byId = new Map<string, { handle: pkcs11js.Handle; account: string } | undefined>();
    for (const handle of found.slice(0, handles.max)) {
      const [id, label] = this.module.p11.C_GetAttributeValue(this.session, handle, [
        { type: pkcs11js.CKA_ID },
        { type: pkcs11js.CKA_LABEL },
      ]);
      const account = labelAccount(label?.value);
      if (!(id?.value instanceof Buffer) || id.value.length !== ED25519_ID_BYTES || account === undefined) continue;
      const key = blobHash(id.value);
      byId.set(key, byId.has(key) ? undefined : { handle, account });
    }
    let remembered = 0;
    for (const [walletHash, entry] of byId) {
      if (entry === undefined) continue;
      handles.set(handleKey(entry.account, walletHash), entry.handle);
      remembered++;
    }
    return remembered;
  }

  /** The handle of the wallet's private key, if it belongs to the account (see `lookUp`); cached. */
  find(wallet: DecodedKeyRef, accountBlobHash: string): pkcs11js.Handle {
    const key = handleKey(accountBlobHash, wallet.blobHash);
    const known = this.handles?.get(key);
    if (known !== undefined) return known;
    const handle = this.timed('find_wallet_key', () => this.lookUp(wallet.blob, accountBlobHash));
    this.handles?.set(key, handle);
    return handle;
  }

  /** Forgets a cached handle (the key is being destroyed). */
  forget(wallet: DecodedKeyRef, accountBlobHash: string): void {
    this.handles?.delete(handleKey(accountBlobHash, wallet.blobHash));
  }

  clear(): void {
    this.handles?.clear();
  }

  /**
   * The private key with this CKA_ID, if it belongs to the account: `key_not_found` when there is none or
   * its label names another account (the two are not told apart).
   */
  private lookUp(id: Buffer, accountBlobHash: string): pkcs11js.Handle {
    const found = this.module.findObjects(this.session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
      { type: pkcs11js.CKA_TOKEN, value: true },
      { type: pkcs11js.CKA_ID, value: id },
    ]);
    if (found.length > 1) throw new SignerFault('hsm_error', `${found.length} Ed25519 keys share one CKA_ID`);
    const handle = found[0];
    if (handle === undefined) throw new SignerFault('key_not_found', 'no Ed25519 wallet key with this reference');
    const [label] = this.module.p11.C_GetAttributeValue(this.session, handle, [{ type: pkcs11js.CKA_LABEL }]);
    if (label?.value?.toString('utf8') !== ed25519Label(accountBlobHash))
      throw new SignerFault('key_not_found', 'no Ed25519 wallet key with this reference');
    return handle;
  }

  /**
   * Destroys a wallet's token key for good, once its tombstone is written. An object already gone (destroyed by
   * a destroy that was interrupted, or by another session of this token) is what was asked for — told by CKR
   * code, never by message; any other failure is thrown.
   */
  destroyKey(handle: pkcs11js.Handle): void {
    try {
      this.module.p11.C_DestroyObject(this.session, handle);
    } catch (err) {
      const code = ckrCode(err);
      if (code !== pkcs11js.CKR_OBJECT_HANDLE_INVALID && code !== pkcs11js.CKR_KEY_HANDLE_INVALID) throw err;
    }
  }

  /** Destroys an object (a public half, a key never referenced); errors for an object already gone are swallowed. */
  destroy(handle: pkcs11js.Handle): void {
    try {
      this.module.p11.C_DestroyObject(this.session, handle);
    } catch {
      /* already destroyed */
    }
  }
}
