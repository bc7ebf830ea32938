/**
 * The root KEK of the PKCS#11 key hierarchy (docs/adr/0002-signer-key-hierarchy.md), found by label at start.
 *
 * Protects against: a KEK weaker than the hierarchy assumes (extractable, not sensitive, able to decrypt,
 * not a token object) or ambiguous (two keys with the label): both refused at start.
 * Known limits: checks attributes as the token reports them; a token that lies about them is not detected.
 */
import pkcs11js from 'pkcs11js';
import type { Pkcs11BackendConfig } from '../../config/signer-config.js';
import { SignerFault } from '../../signer-error.js';
import type { Pkcs11Module } from './pkcs11-module.js';

/** Finds the root KEK by label and refuses one weaker than the hierarchy assumes. */
export function findRootKek(
  module: Pkcs11Module,
  session: pkcs11js.Handle,
  config: Pkcs11BackendConfig,
): pkcs11js.Handle {
  const found = module.findObjects(session, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
    { type: pkcs11js.CKA_LABEL, value: config.kekLabel },
  ]);
  if (found.length === 0) {
    throw new SignerFault(
      'key_not_found',
      `root KEK "${config.kekLabel}" not found on token "${config.tokenLabel}"; create it with npm run hsm:init`,
    );
  }
  if (found.length > 1)
    throw new SignerFault(
      'hsm_error',
      `${found.length} keys labelled "${config.kekLabel}" on token "${config.tokenLabel}": the root KEK must be unique`,
    );
  const kek = found[0]!;
  const attrs = module.p11.C_GetAttributeValue(session, kek, [
    { type: pkcs11js.CKA_KEY_TYPE },
    { type: pkcs11js.CKA_TOKEN },
    { type: pkcs11js.CKA_SENSITIVE },
    { type: pkcs11js.CKA_EXTRACTABLE },
    { type: pkcs11js.CKA_UNWRAP },
    { type: pkcs11js.CKA_DECRYPT },
  ]);
  const [keyType, token, sensitive, extractable, unwrap, decrypt] = attrs.map((a) => a.value);
  const isTrue = (b: Buffer | undefined) => b !== undefined && b.length > 0 && b[0] !== 0;
  const problems = [
    !(keyType !== undefined && keyType.length >= 4 && keyType.readUInt32LE(0) === pkcs11js.CKK_AES) && 'not an AES key',
    !isTrue(token) && 'not a token object',
    !isTrue(sensitive) && 'not sensitive',
    isTrue(extractable) && 'extractable',
    !isTrue(unwrap) && 'cannot unwrap',
    isTrue(decrypt) && 'may decrypt (could reveal wrapped keys)',
  ].filter(Boolean);
  if (problems.length > 0)
    throw new SignerFault('hsm_error', `root KEK "${config.kekLabel}" refused: ${problems.join(', ')}`);
  return kek;
}
