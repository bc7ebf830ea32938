/**
 * The opaque key references of the AWS KMS backend, and the alias that binds a wallet key to its account:
 *   account  `kms:v1:acct:<32 lower-case hex>`  a random id made by the signer (no KMS resource of its own)
 *   wallet   `kms:v1:wal:<key uuid>`            the KMS key id of a secp256k1 key, lower-case canonical UUID
 *            `kms:v1:ed25519:<key uuid>`        the same for an Ed25519 key (the prefix names the curve)
 *   alias    `alias/<prefix>/<account hex>/<key uuid>`, created by the signer right after CreateKey
 * Both references match the protocol's keyRefSchema (letters, digits, `:`, `-`).
 *
 * Protects against: one key having several names (only the canonical lower-case spelling is accepted,
 * so tombstones keyed on the key id cannot be dodged by re-spelling), a PKCS#11 reference or an ARN being
 * taken for a KMS one, and a wallet key being used under another account: the backend always reaches a
 * key through the alias that names both, which only exists for the pair the signer created.
 * Known limits: a reference proves nothing by itself; KMS (the alias and the key's state) decides.
 */
import { SignerFault } from '../../signer-error.js';
import type { WalletKeyCurve } from '../key-backend.js';

export type KmsKeyRefKind = 'acct' | 'wal';

const ACCOUNT_REF = /^kms:v1:acct:([0-9a-f]{32})$/;
const WALLET_REF = /^kms:v1:(wal|ed25519):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
/** What an alias prefix may be: KMS allows `[a-zA-Z0-9/_-]`; `aws` is reserved by AWS. */
export const ALIAS_PREFIX_PATTERN = /^(?!aws(\/|$))[A-Za-z0-9_-]{1,64}(\/[A-Za-z0-9_-]{1,64}){0,3}$/;

export function encodeAccountRef(accountId: string): string {
  return `kms:v1:acct:${accountId}`;
}

export function encodeWalletRef(keyId: string, curve: WalletKeyCurve = 'secp256k1'): string {
  return `kms:v1:${curve === 'ed25519' ? 'ed25519' : 'wal'}:${keyId}`;
}

/** The account id (32 hex) of an account reference; `key_not_found` for anything else. */
export function decodeAccountRef(ref: string, field = 'account_key_ref'): string {
  const m = ACCOUNT_REF.exec(ref);
  if (!m) throw new SignerFault('key_not_found', `${field} is not an AWS KMS account key reference`);
  return m[1]!;
}

/** The KMS key id (UUID) and curve of a wallet reference; `key_not_found` for anything else. */
export function decodeWalletKey(ref: string, field = 'wallet_key_ref'): { keyId: string; curve: WalletKeyCurve } {
  const m = WALLET_REF.exec(ref);
  if (!m) throw new SignerFault('key_not_found', `${field} is not an AWS KMS wallet key reference`);
  return { keyId: m[2]!, curve: m[1] === 'ed25519' ? 'ed25519' : 'secp256k1' };
}

/** The KMS key id (UUID) of a wallet reference of either curve; `key_not_found` for anything else. */
export function decodeWalletRef(ref: string, field = 'wallet_key_ref'): string {
  return decodeWalletKey(ref, field).keyId;
}

/** The KMS key id of a wallet reference of either curve (its tombstone's key); undefined for anything else. */
export function walletKeyIdOf(ref: string): string | undefined {
  return WALLET_REF.exec(ref)?.[2];
}

export function walletAlias(prefix: string, accountId: string, keyId: string): string {
  return `alias/${prefix}/${accountId}/${keyId}`;
}

/** Whether a KMS key ARN (as Sign, GetPublicKey and ScheduleKeyDeletion answer it) names this key id. */
export function arnNamesKey(arn: string | undefined, keyId: string): boolean {
  return typeof arn === 'string' && (arn === keyId || arn.endsWith(`:key/${keyId}`));
}
