/**
 * Tombstones of destroyed wallet keys, kept in the HSM token itself: one CKO_DATA token object per
 * destroyed key, labelled `tomb:<sha256 of the wrapped blob>`, application `treasury-tombstone`, private
 * (needs the user PIN to see), not modifiable and not destroyable through the API. Loaded into a Set at
 * start; checked before every unwrap. Each tombstone written since 2026-12 also holds, as its CKA_VALUE, the hash of
 * the account key the destroyed key belonged to (the destroy proved it: the blob unwrapped under it, or the Ed25519
 * object's label named it), so that a destroyed key is told `key_destroyed` to its own account only: asked with
 * another account's key reference, it is `key_not_found`, as a key that never existed (`stateFor`).
 *
 * Why in the token: a wrapped DEK lives on in the front's database and backups, so "destroy" cannot
 * delete it; the signer must refuse it forever, and the record belongs next to the keys it guards (a
 * restore of the database cannot resurrect a key). Keyed on the blob's hash, so no re-spelling of the
 * reference gets past it.
 * Known limits: the Set is loaded at start — a second signer process on the same token learns of a
 * tombstone only when it restarts (run one signer per token, or restart peers after a destroy; the front
 * also refuses revoked wallets first). Someone holding the SO PIN can reinitialise the token. A tombstone written
 * before the account was recorded in it names none: its key answers `key_destroyed` whichever account asks.
 */
import pkcs11js from 'pkcs11js';
import { SignerFault } from '../../signer-error.js';
import type { Pkcs11Module } from './pkcs11-module.js';

const APPLICATION = 'treasury-tombstone';
const LABEL_PREFIX = 'tomb:';

/** A wallet key's tombstone as an account sees it: none, its own key destroyed, or a key that is not its own. */
export type TombstoneState = 'live' | 'destroyed' | 'of_another_account';

/** The account hash a tombstone holds: 64 hex, as `blobHash` spells it; anything else is no account. */
const ACCOUNT_HASH = /^[0-9a-f]{64}$/;

export class TombstoneStore {
  /** Blob hash → the account key's hash recorded with it (undefined: a tombstone that names none). */
  private constructor(private readonly hashes: Map<string, string | undefined>) {}

  static load(module: Pkcs11Module, session: pkcs11js.Handle): TombstoneStore {
    const handles = module.findObjects(session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA },
      { type: pkcs11js.CKA_APPLICATION, value: APPLICATION },
    ]);
    const hashes = new Map<string, string | undefined>();
    for (const handle of handles) {
      const [label, value] = module.p11.C_GetAttributeValue(session, handle, [
        { type: pkcs11js.CKA_LABEL },
        { type: pkcs11js.CKA_VALUE },
      ]);
      const text = label?.value?.toString('utf8') ?? '';
      const account = value?.value?.toString('utf8') ?? '';
      if (text.startsWith(LABEL_PREFIX))
        hashes.set(text.slice(LABEL_PREFIX.length), ACCOUNT_HASH.test(account) ? account : undefined);
    }
    return new TombstoneStore(hashes);
  }

  has(blobHash: string): boolean {
    return this.hashes.has(blobHash);
  }

  /**
   * The key's tombstone as the account (its key's hash) sees it: `of_another_account` only when the tombstone names
   * another account; one that names none is `destroyed` to every account.
   */
  stateFor(blobHash: string, accountBlobHash: string): TombstoneState {
    if (!this.hashes.has(blobHash)) return 'live';
    const account = this.hashes.get(blobHash);
    return account === undefined || account === accountBlobHash ? 'destroyed' : 'of_another_account';
  }

  /** Whether the account's own key is destroyed; `key_not_found` when the tombstone names another account. */
  destroyedOf(blobHash: string, accountBlobHash: string): boolean {
    const state = this.stateFor(blobHash, accountBlobHash);
    if (state === 'of_another_account')
      throw new SignerFault('key_not_found', 'wallet_key_ref names no wallet key of this account');
    return state === 'destroyed';
  }

  get size(): number {
    return this.hashes.size;
  }

  /** Writes the tombstone, naming the key's account (its key's hash), to the token (idempotent), then remembers it. */
  record(module: Pkcs11Module, session: pkcs11js.Handle, blobHash: string, accountBlobHash: string): void {
    if (this.hashes.has(blobHash)) return;
    module.p11.C_CreateObject(session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA },
      { type: pkcs11js.CKA_TOKEN, value: true },
      { type: pkcs11js.CKA_PRIVATE, value: true },
      { type: pkcs11js.CKA_MODIFIABLE, value: false },
      { type: pkcs11js.CKA_DESTROYABLE, value: false },
      { type: pkcs11js.CKA_APPLICATION, value: APPLICATION },
      { type: pkcs11js.CKA_LABEL, value: `${LABEL_PREFIX}${blobHash}` },
      { type: pkcs11js.CKA_VALUE, value: Buffer.from(accountBlobHash, 'utf8') },
    ]);
    this.hashes.set(blobHash, accountBlobHash);
  }
}
