/**
 * What a PKCS#11 token must offer for the signer to do its job (docs/deploy-hsm.md, "Required mechanisms"):
 * the key hierarchy (AES account keys wrapped by the root KEK, wallet keys wrapped by their account key), EVM
 * wallets (secp256k1 key pairs, ECDSA) and Solana wallets (Ed25519 key pairs, EdDSA), each mechanism with the
 * functions (CKF_* flags) the signer calls it for. Pure: the list and the comparison with what a token reports;
 * ./token-qualification.ts reads the token and tries each capability for real.
 *
 * Defends: a signer that says "ready" on a token that cannot make or use its keys and then answers every
 * request "retry shortly" — the hierarchy and secp256k1 are required to start; Ed25519 only to serve Solana
 * wallets (without it the signer starts and refuses those with the permanent `hsm_unsupported`). Does not
 * defend: a token that lists a mechanism it then fails (the functional probes catch that).
 */
import pkcs11js from 'pkcs11js';
import { CKM_EC_EDWARDS_KEY_PAIR_GEN, CKM_EDDSA } from './ed25519-token-keys.js';

/** What a requirement is needed for: starting at all, or serving one curve's wallets. */
export type TokenCapability = 'key_hierarchy' | 'secp256k1' | 'ed25519';

export interface MechanismRequirement {
  capability: TokenCapability;
  name: string;
  mechanism: number;
  /** The CKF_* function flags the signer uses it with. */
  flags: number;
  flagNames: readonly string[];
}

const requirement = (
  capability: TokenCapability,
  name: string,
  mechanism: number,
  flagNames: readonly ('CKF_GENERATE' | 'CKF_GENERATE_KEY_PAIR' | 'CKF_SIGN' | 'CKF_WRAP' | 'CKF_UNWRAP')[],
): MechanismRequirement => ({
  capability,
  name,
  mechanism,
  flags: flagNames.reduce((all, flag) => all | pkcs11js[flag], 0),
  flagNames,
});

export const MECHANISM_REQUIREMENTS: readonly MechanismRequirement[] = [
  requirement('key_hierarchy', 'CKM_AES_KEY_GEN', pkcs11js.CKM_AES_KEY_GEN, ['CKF_GENERATE']),
  requirement('key_hierarchy', 'CKM_AES_KEY_WRAP_PAD', pkcs11js.CKM_AES_KEY_WRAP_PAD, ['CKF_WRAP', 'CKF_UNWRAP']),
  requirement('secp256k1', 'CKM_EC_KEY_PAIR_GEN', pkcs11js.CKM_EC_KEY_PAIR_GEN, ['CKF_GENERATE_KEY_PAIR']),
  requirement('secp256k1', 'CKM_ECDSA', pkcs11js.CKM_ECDSA, ['CKF_SIGN']),
  requirement('ed25519', 'CKM_EC_EDWARDS_KEY_PAIR_GEN', CKM_EC_EDWARDS_KEY_PAIR_GEN, ['CKF_GENERATE_KEY_PAIR']),
  requirement('ed25519', 'CKM_EDDSA', CKM_EDDSA, ['CKF_SIGN']),
];

/** Capabilities the signer cannot start without. */
export const REQUIRED_TO_START: readonly TokenCapability[] = ['key_hierarchy', 'secp256k1'];

export interface MechanismFinding {
  requirement: MechanismRequirement;
  /** `absent`: not in the token's mechanism list; `flags_missing`: listed without a function the signer needs. */
  status: 'ok' | 'absent' | 'flags_missing';
  missingFlags: readonly string[];
}

/** Compares what the token lists (mechanism → its CKF_* flags) with the requirements, one finding each. */
export function assessMechanisms(available: ReadonlyMap<number, number>): MechanismFinding[] {
  return MECHANISM_REQUIREMENTS.map((req) => {
    const flags = available.get(req.mechanism);
    if (flags === undefined) return { requirement: req, status: 'absent', missingFlags: req.flagNames };
    const missingFlags = req.flagNames.filter((name) => (flags & pkcs11js[name as 'CKF_SIGN']) === 0);
    return { requirement: req, status: missingFlags.length ? 'flags_missing' : 'ok', missingFlags };
  });
}

/** One line naming what is missing, e.g. "CKM_ECDSA (absent), CKM_AES_KEY_WRAP_PAD (no CKF_UNWRAP)". */
export function describeMissing(findings: readonly MechanismFinding[]): string {
  return findings
    .filter((f) => f.status !== 'ok')
    .map((f) =>
      f.status === 'absent'
        ? `${f.requirement.name} (absent)`
        : `${f.requirement.name} (no ${f.missingFlags.join(', no ')})`,
    )
    .join(', ');
}
