/**
 * Tombstones of destroyed KMS wallet keys: the key ids this signer destroyed, kept in memory and, when
 * TREASURY_KMS_TOMBSTONE_FILE is set, appended to that file (one key id a line, followed by a space and the
 * Treasury account id the key was destroyed under; fsync'd before the destroy goes on) and read back at start — the role the token's CKO_DATA objects play for PKCS#11
 * (../pkcs11/tombstone-store.ts), which KMS has no equivalent of once a key is deleted.
 *
 * Protects against: a destroyed reference answering anything but `key_destroyed`. On KMS the key itself
 * can never sign again: it is disabled at once and deleted after the pending window (KMS refuses Sign on
 * a disabled or pending-deletion key; nothing is left to sign with after deletion). Without the record,
 * a deleted key's reference would answer `key_not_found`, indistinguishable from a typo. A destroyed key asked
 * for under another account is `key_not_found`, as a key that never existed (`stateFor`): only its own account
 * learns that it was destroyed.
 * Known limits: the file is this signer's; losing it turns `key_destroyed` into `key_not_found` for keys
 * KMS has already deleted (never into a signature). Lines that are not key ids are ignored; a line with a key id
 * alone (written before the account was kept) answers `key_destroyed` whichever account asks.
 */
import fs from 'node:fs';

/** A key id, optionally followed by one space and the account id (32 hex) it was destroyed under. */
const LINE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?: ([0-9a-f]{32}))?$/;

/** A wallet key's tombstone as an account sees it: none, its own key destroyed, or a key that is not its own. */
export type KmsTombstoneState = 'live' | 'destroyed' | 'of_another_account';

export class KmsTombstones {
  private constructor(
    /** Key id → the account id it was destroyed under (undefined: a line that names none). */
    private readonly ids: Map<string, string | undefined>,
    private readonly file: string | undefined,
  ) {}

  static load(file: string | undefined): KmsTombstones {
    const ids = new Map<string, string | undefined>();
    if (file !== undefined && fs.existsSync(file)) {
      for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        const m = LINE.exec(line);
        // A key named twice keeps the account one of its lines names.
        if (m) ids.set(m[1]!, m[2] ?? ids.get(m[1]!));
      }
    }
    return new KmsTombstones(ids, file);
  }

  has(keyId: string): boolean {
    return this.ids.has(keyId);
  }

  /** `of_another_account` only when the tombstone names another account; one that names none is `destroyed`. */
  stateFor(keyId: string, account: string): KmsTombstoneState {
    if (!this.ids.has(keyId)) return 'live';
    const owner = this.ids.get(keyId);
    return owner === undefined || owner === account ? 'destroyed' : 'of_another_account';
  }

  /**
   * Remembers the key as destroyed under `account` (its Treasury account id), durably when a file is configured
   * (written before this returns). Idempotent.
   */
  record(keyId: string, account: string): void {
    if (this.ids.has(keyId)) return;
    if (this.file !== undefined) {
      const fd = fs.openSync(this.file, 'a', 0o600);
      try {
        fs.writeSync(fd, `${keyId} ${account}\n`);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
    this.ids.set(keyId, account);
  }
}
