/**
 * Tombstones of destroyed wallet keys, kept in the HSM token itself: one CKO_DATA token object per
 * destroyed key, labelled `tomb:<sha256 of the wrapped blob>`, application `treasury-tombstone`, private
 * (needs the user PIN to see), not modifiable and not destroyable through the API. Loaded into a Set at
 * start; checked before every unwrap.
 *
 * Why in the token: a wrapped DEK lives on in the front's database and backups, so "destroy" cannot
 * delete it; the signer must refuse it forever, and the record belongs next to the keys it guards (a
 * restore of the database cannot resurrect a key). Keyed on the blob's hash, so no re-spelling of the
 * reference gets past it.
 * Known limits: the Set is loaded at start — a second signer process on the same token learns of a
 * tombstone only when it restarts (run one signer per token, or restart peers after a destroy; the front
 * also refuses revoked wallets first). Someone holding the SO PIN can reinitialise the token.
 */
import pkcs11js from 'pkcs11js';
import type { Pkcs11Module } from './pkcs11-module.js';

const APPLICATION = 'treasury-tombstone';
const LABEL_PREFIX = 'tomb:';

export class TombstoneStore {
  private constructor(private readonly hashes: Set<string>) {}

  static load(module: Pkcs11Module, session: pkcs11js.Handle): TombstoneStore {
    const handles = module.findObjects(session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA },
      { type: pkcs11js.CKA_APPLICATION, value: APPLICATION },
    ]);
    const hashes = new Set<string>();
    for (const handle of handles) {
      const [label] = module.p11.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_LABEL }]);
      const text = label?.value?.toString('utf8') ?? '';
      if (text.startsWith(LABEL_PREFIX)) hashes.add(text.slice(LABEL_PREFIX.length));
    }
    return new TombstoneStore(hashes);
  }

  has(blobHash: string): boolean {
    return this.hashes.has(blobHash);
  }

  get size(): number {
    return this.hashes.size;
  }

  /** Writes the tombstone to the token (idempotent), then remembers it. */
  record(module: Pkcs11Module, session: pkcs11js.Handle, blobHash: string): void {
    if (this.hashes.has(blobHash)) return;
    module.p11.C_CreateObject(session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA },
      { type: pkcs11js.CKA_TOKEN, value: true },
      { type: pkcs11js.CKA_PRIVATE, value: true },
      { type: pkcs11js.CKA_MODIFIABLE, value: false },
      { type: pkcs11js.CKA_DESTROYABLE, value: false },
      { type: pkcs11js.CKA_APPLICATION, value: APPLICATION },
      { type: pkcs11js.CKA_LABEL, value: `${LABEL_PREFIX}${blobHash}` },
    ]);
    this.hashes.add(blobHash);
  }
}
