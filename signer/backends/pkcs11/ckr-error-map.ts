/**
 * The one place PKCS#11 return values (CKR_*) become our signer error codes — by numeric code, never by
 * message text. Anything unknown is `hsm_error`.
 */
import pkcs11js from 'pkcs11js';
import type { SignerErrorCode } from '../../protocol/signer-protocol.js';
import { SignerFault } from '../../signer-error.js';

const BY_CODE = new Map<number, SignerErrorCode>([
  [pkcs11js.CKR_WRAPPED_KEY_INVALID, 'key_not_found'],
  [pkcs11js.CKR_WRAPPED_KEY_LEN_RANGE, 'key_not_found'],
  [pkcs11js.CKR_ENCRYPTED_DATA_INVALID, 'key_not_found'],
  [pkcs11js.CKR_ENCRYPTED_DATA_LEN_RANGE, 'key_not_found'],
  [pkcs11js.CKR_KEY_HANDLE_INVALID, 'key_not_found'],
  [pkcs11js.CKR_OBJECT_HANDLE_INVALID, 'key_not_found'],
  [pkcs11js.CKR_DEVICE_ERROR, 'hsm_unavailable'],
  [pkcs11js.CKR_DEVICE_REMOVED, 'hsm_unavailable'],
  [pkcs11js.CKR_DEVICE_MEMORY, 'hsm_unavailable'],
  [pkcs11js.CKR_TOKEN_NOT_PRESENT, 'hsm_unavailable'],
  [pkcs11js.CKR_SESSION_HANDLE_INVALID, 'hsm_unavailable'],
  [pkcs11js.CKR_SESSION_CLOSED, 'hsm_unavailable'],
  [pkcs11js.CKR_CRYPTOKI_NOT_INITIALIZED, 'hsm_unavailable'],
  [pkcs11js.CKR_USER_NOT_LOGGED_IN, 'hsm_unavailable'],
  [pkcs11js.CKR_PIN_INCORRECT, 'hsm_unavailable'],
  [pkcs11js.CKR_PIN_LOCKED, 'hsm_unavailable'],
  [pkcs11js.CKR_OPERATION_ACTIVE, 'busy'],
]);

export function ckrCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * Maps a pkcs11js error (Pkcs11Error carries `.code`) to a SignerFault; other errors pass through.
 * Unwrapping a blob that was not produced by this key hierarchy makes SoftHSM answer CKR_GENERAL_ERROR
 * (the AES key-wrap integrity check fails), so for unwrap operations that code means `key_not_found`.
 */
export function toSignerFault(err: unknown, operation: string): SignerFault {
  if (err instanceof SignerFault) return err;
  const code = ckrCode(err);
  if (code === undefined) return new SignerFault('hsm_error', `${operation} failed`);
  const mapped = operation.startsWith('unwrap_') && code === pkcs11js.CKR_GENERAL_ERROR ? 'key_not_found' : (BY_CODE.get(code) ?? 'hsm_error');
  return new SignerFault(mapped, `${operation} failed (CKR 0x${code.toString(16).padStart(8, '0')})`);
}
