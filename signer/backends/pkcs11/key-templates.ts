/**
 * Every PKCS#11 attribute template of the key hierarchy, in one place, so the ADR and a reviewer can read
 * exactly what the HSM is asked for (docs/adr/0002-signer-key-hierarchy.md).
 *
 * Protects against: keys with more power than their role — e.g. an unwrapped DEK that could be wrapped
 * out again (CKA_EXTRACTABLE false), an account key that could encrypt or decrypt data, a KEK that signs.
 * Known limits: freshly generated account keys and DEKs must be CKA_EXTRACTABLE so they can be wrapped
 * once (measured on SoftHSM 2.6.1: CKA_WRAP_WITH_TRUSTED needs a CKA_TRUSTED wrapping key, which only
 * the SO may mark, and our account keys are user session objects); they are destroyed right after.
 * pkcs11js 2.1.7 cannot pass array attributes, so CKA_UNWRAP_TEMPLATE cannot pin unwrapped attributes.
 */
import pkcs11js from 'pkcs11js';

export const SECP256K1_EC_PARAMS = Buffer.from('06052b8104000a', 'hex');
export const WRAP_MECHANISM: pkcs11js.Mechanism = { mechanism: pkcs11js.CKM_AES_KEY_WRAP_PAD };

/** A fresh account key: AES-256, session object, sensitive, extractable only so the KEK can wrap it once. */
export const GENERATE_ACCOUNT_KEY: pkcs11js.Template = [
  { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
  { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
  { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
  { type: pkcs11js.CKA_TOKEN, value: false },
  { type: pkcs11js.CKA_PRIVATE, value: true },
  { type: pkcs11js.CKA_SENSITIVE, value: true },
  { type: pkcs11js.CKA_EXTRACTABLE, value: true },
  { type: pkcs11js.CKA_WRAP, value: true },
  { type: pkcs11js.CKA_UNWRAP, value: true },
  { type: pkcs11js.CKA_ENCRYPT, value: false },
  { type: pkcs11js.CKA_DECRYPT, value: false },
  { type: pkcs11js.CKA_SIGN, value: false },
  { type: pkcs11js.CKA_DERIVE, value: false },
];

/** An account key unwrapped by the KEK: wraps new DEKs and unwraps existing ones, nothing else, never leaves. */
export const UNWRAP_ACCOUNT_KEY: pkcs11js.Template = [
  { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
  { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
  { type: pkcs11js.CKA_TOKEN, value: false },
  { type: pkcs11js.CKA_PRIVATE, value: true },
  { type: pkcs11js.CKA_SENSITIVE, value: true },
  { type: pkcs11js.CKA_EXTRACTABLE, value: false },
  { type: pkcs11js.CKA_WRAP, value: true },
  { type: pkcs11js.CKA_UNWRAP, value: true },
  { type: pkcs11js.CKA_ENCRYPT, value: false },
  { type: pkcs11js.CKA_DECRYPT, value: false },
  { type: pkcs11js.CKA_SIGN, value: false },
  { type: pkcs11js.CKA_DERIVE, value: false },
];

/** The public half of a fresh DEK: a session object read once for CKA_EC_POINT, then destroyed. */
export const GENERATE_WALLET_PUBLIC_KEY: pkcs11js.Template = [
  { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
  { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_EC },
  { type: pkcs11js.CKA_EC_PARAMS, value: SECP256K1_EC_PARAMS },
  { type: pkcs11js.CKA_TOKEN, value: false },
  { type: pkcs11js.CKA_VERIFY, value: true },
];

/** The private half of a fresh DEK: sensitive; extractable only so its account key can wrap it once. */
export const GENERATE_WALLET_PRIVATE_KEY: pkcs11js.Template = [
  { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
  { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_EC },
  { type: pkcs11js.CKA_TOKEN, value: false },
  { type: pkcs11js.CKA_PRIVATE, value: true },
  { type: pkcs11js.CKA_SENSITIVE, value: true },
  { type: pkcs11js.CKA_EXTRACTABLE, value: true },
  { type: pkcs11js.CKA_SIGN, value: true },
  { type: pkcs11js.CKA_DECRYPT, value: false },
  { type: pkcs11js.CKA_DERIVE, value: false },
];

/** A DEK unwrapped for signing: sign only, sensitive, never extractable (cannot be wrapped out again). */
export const UNWRAP_WALLET_KEY: pkcs11js.Template = [
  { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
  { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_EC },
  { type: pkcs11js.CKA_TOKEN, value: false },
  { type: pkcs11js.CKA_PRIVATE, value: true },
  { type: pkcs11js.CKA_SENSITIVE, value: true },
  { type: pkcs11js.CKA_EXTRACTABLE, value: false },
  { type: pkcs11js.CKA_SIGN, value: true },
  { type: pkcs11js.CKA_DECRYPT, value: false },
  { type: pkcs11js.CKA_DERIVE, value: false },
];

/** The root KEK created by ops/softhsm/init-token.ts: a token object that only wraps and unwraps. */
export function rootKekTemplate(label: string): pkcs11js.Template {
  return [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
    { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
    { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
    { type: pkcs11js.CKA_LABEL, value: label },
    { type: pkcs11js.CKA_TOKEN, value: true },
    { type: pkcs11js.CKA_PRIVATE, value: true },
    { type: pkcs11js.CKA_SENSITIVE, value: true },
    { type: pkcs11js.CKA_EXTRACTABLE, value: false },
    { type: pkcs11js.CKA_MODIFIABLE, value: false },
    { type: pkcs11js.CKA_WRAP, value: true },
    { type: pkcs11js.CKA_UNWRAP, value: true },
    { type: pkcs11js.CKA_ENCRYPT, value: false },
    { type: pkcs11js.CKA_DECRYPT, value: false },
    { type: pkcs11js.CKA_SIGN, value: false },
    { type: pkcs11js.CKA_VERIFY, value: false },
    { type: pkcs11js.CKA_DERIVE, value: false },
  ];
}
