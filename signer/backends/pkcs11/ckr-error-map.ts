/**
 * The one place PKCS#11 return values (CKR_*) become signer error codes — by numeric code (pkcs11js's
 * Pkcs11Error carries `.code`), never by message text. Anything unlisted is `hsm_error`.
 *
 * Protects against: HSM internals leaking to the front (the message names the operation and the CKR code
 * only), and error handling that silently changes when a library rewords its messages.
 * Known limits: SoftHSM answers CKR_GENERAL_ERROR when an AES-key-wrap integrity check fails (a blob not
 * wrapped by that key: tampered, or presented with another account's key), so for unwrap operations that
 * code means `key_not_found`; elsewhere it stays `hsm_error`. A token that does not offer what is asked (a
 * mechanism, curve, key type or template: CKR_MECHANISM_INVALID and its kin) is `hsm_unsupported`, which the
 * front answers as permanent, never "retry shortly".
 */
import pkcs11js from 'pkcs11js';
import type { SignerErrorCode } from '../../protocol/signer-protocol.js';
import { SignerFault } from '../../signer-error.js';

/** PKCS#11 2.40's CKR_CURVE_NOT_SUPPORTED, which pkcs11js 2.1.7 does not name. */
const CKR_CURVE_NOT_SUPPORTED = 0x140;

const BY_CODE = new Map<number, SignerErrorCode>([
  [pkcs11js.CKR_WRAPPED_KEY_INVALID, 'key_not_found'],
  [pkcs11js.CKR_WRAPPED_KEY_LEN_RANGE, 'key_not_found'],
  [pkcs11js.CKR_ENCRYPTED_DATA_INVALID, 'key_not_found'],
  [pkcs11js.CKR_ENCRYPTED_DATA_LEN_RANGE, 'key_not_found'],
  [pkcs11js.CKR_KEY_HANDLE_INVALID, 'key_not_found'],
  [pkcs11js.CKR_OBJECT_HANDLE_INVALID, 'key_not_found'],
  [pkcs11js.CKR_UNWRAPPING_KEY_HANDLE_INVALID, 'key_not_found'],
  [pkcs11js.CKR_DEVICE_ERROR, 'hsm_unavailable'],
  [pkcs11js.CKR_DEVICE_REMOVED, 'hsm_unavailable'],
  [pkcs11js.CKR_DEVICE_MEMORY, 'hsm_unavailable'],
  [pkcs11js.CKR_HOST_MEMORY, 'hsm_unavailable'],
  [pkcs11js.CKR_TOKEN_NOT_PRESENT, 'hsm_unavailable'],
  [pkcs11js.CKR_TOKEN_NOT_RECOGNIZED, 'hsm_unavailable'],
  [pkcs11js.CKR_SESSION_HANDLE_INVALID, 'hsm_unavailable'],
  [pkcs11js.CKR_SESSION_CLOSED, 'hsm_unavailable'],
  [pkcs11js.CKR_SESSION_COUNT, 'hsm_unavailable'],
  [pkcs11js.CKR_CRYPTOKI_NOT_INITIALIZED, 'hsm_unavailable'],
  [pkcs11js.CKR_USER_NOT_LOGGED_IN, 'hsm_unavailable'],
  [pkcs11js.CKR_PIN_INCORRECT, 'hsm_unavailable'],
  [pkcs11js.CKR_PIN_LOCKED, 'hsm_unavailable'],
  [pkcs11js.CKR_OPERATION_ACTIVE, 'busy'],
  // The token does not offer what the signer asks (a mechanism, key type, curve or template): permanent.
  [pkcs11js.CKR_MECHANISM_INVALID, 'hsm_unsupported'],
  [pkcs11js.CKR_MECHANISM_PARAM_INVALID, 'hsm_unsupported'],
  [pkcs11js.CKR_FUNCTION_NOT_SUPPORTED, 'hsm_unsupported'],
  [pkcs11js.CKR_DOMAIN_PARAMS_INVALID, 'hsm_unsupported'],
  [CKR_CURVE_NOT_SUPPORTED, 'hsm_unsupported'],
  [pkcs11js.CKR_TEMPLATE_INCONSISTENT, 'hsm_unsupported'],
  [pkcs11js.CKR_ATTRIBUTE_TYPE_INVALID, 'hsm_unsupported'],
  [pkcs11js.CKR_ATTRIBUTE_VALUE_INVALID, 'hsm_unsupported'],
]);

export function ckrCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export function mapCkrCode(code: number, operation: string): SignerErrorCode {
  if (operation.startsWith('unwrap_') && code === pkcs11js.CKR_GENERAL_ERROR) return 'key_not_found';
  return BY_CODE.get(code) ?? 'hsm_error';
}

/** Maps a pkcs11js error to a SignerFault naming the operation and the CKR code; SignerFaults pass through. */
export function toSignerFault(err: unknown, operation: string): SignerFault {
  if (err instanceof SignerFault) return err;
  const code = ckrCode(err);
  if (code === undefined) return new SignerFault('hsm_error', `${operation} failed`);
  return new SignerFault(
    mapCkrCode(code, operation),
    `${operation} failed (CKR 0x${code.toString(16).padStart(8, '0')})`,
  );
}
