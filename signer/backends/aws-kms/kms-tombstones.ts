/**
 * Tombstones of destroyed KMS wallet keys: the key ids this signer destroyed, kept in memory and, when
 * TREASURY_KMS_TOMBSTONE_FILE is set, appended to that file (one key id a line, fsync'd before the
 * destroy goes on) and read back at start — the role the token's CKO_DATA objects play for PKCS#11
 * (../pkcs11/tombstone-store.ts), which KMS has no equivalent of once a key is deleted.
 *
 * Protects against: a destroyed reference answering anything but `key_destroyed`. On KMS the key itself
 * can never sign again: it is disabled at once and deleted after the pending window (KMS refuses Sign on
 * a disabled or pending-deletion key; nothing is left to sign with after deletion). Without the record,
 * a deleted key's reference would answer `key_not_found`, indistinguishable from a typo.
 * Known limits: the file is this signer's; losing it turns `key_destroyed` into `key_not_found` for keys
 * KMS has already deleted (never into a signature). Lines that are not key ids are ignored.
 */
import fs from 'node:fs';

const KEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class KmsTombstones {
  private constructor(
    private readonly ids: Set<string>,
    private readonly file: string | undefined,
  ) {}

  static load(file: string | undefined): KmsTombstones {
    const ids = new Set<string>();
    if (file !== undefined && fs.existsSync(file)) {
      for (const line of fs.readFileSync(file, 'utf8').split('\n')) if (KEY_ID.test(line)) ids.add(line);
    }
    return new KmsTombstones(ids, file);
  }

  has(keyId: string): boolean {
    return this.ids.has(keyId);
  }

  /** Remembers the key as destroyed, durably when a file is configured (written before this returns). Idempotent. */
  record(keyId: string): void {
    if (this.ids.has(keyId)) return;
    if (this.file !== undefined) {
      const fd = fs.openSync(this.file, 'a', 0o600);
      try {
        fs.writeSync(fd, `${keyId}\n`);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
    this.ids.add(keyId);
  }
}
