/**
 * The signer's refusals about owner-signed policies (docs/adr/0012-owner-signed-policies.md), as the API's
 * errors, their fields taken from the signer's `details` (never from its message):
 * - `policy_denied` → SignerPolicyDenial: the signer's evaluation of the wallet's signed policy refused a
 *   payment. Only the pay path answers it (../pay/record-signer-denial.ts writes its `pd_…` decision and
 *   turns it into the 403 `policy_denied` every denial answers, with `decided_by: 'signer'`).
 * - `policy_signature_invalid` → 403, `policy_version_stale` → 409 (with `current_version`).
 * - `key_not_found` with `rule: unknown_wallet` (set_wallet_policy for a wallet whose key the signer does not know it
 *   holds: nothing kept) → 403 `policy_signature_invalid` with that rule; any other `key_not_found` is not answered here.
 * - `key_destruction_not_allowed` → 409 of the same name (with `rule`, `current_version` and `next_version`): the
 *   wallet's signed policy does not carry `allow_key_destruction: true`, so the signer kept the key.
 * - `policy_store_unavailable` → 503 `signer_unavailable` with `reason: 'policy_store_unavailable'`, and
 *   `rule: 'no_policy_store'` when the signer keeps no store at all (a configuration, not an outage).
 *
 * Defends: a signer refusal read from prose, or lost on its way to the caller. Does not defend: what the
 * signer decides (signer/owner-policy/).
 */
import type { SignerError } from '../../../signer/protocol/signer-client.js';
import type { PolicyViolationDetail } from '../../../signer/protocol/signer-protocol.js';
import { AppError } from '../errors/app-error.js';

/** A payment the signer's copy of the wallet's signed policy refused; nothing was signed. */
export class SignerPolicyDenial extends AppError {
  readonly violations: PolicyViolationDetail[];
  readonly currentVersion: number | null;

  constructor(err: SignerError, violations: PolicyViolationDetail[]) {
    const currentVersion = err.details?.current_version ?? null;
    super('policy_denied', {
      fields: { decided_by: 'signer', rule: violations[0]!.rule, current_version: currentVersion },
      cause: err,
    });
    this.violations = violations;
    this.currentVersion = currentVersion;
  }
}

/**
 * 409 `key_destruction_not_allowed`: the wallet's owner-signed policy (at `currentVersion`) does not let its key be
 * destroyed; the owner signs the next version with `allow_key_destruction: true`.
 */
export function keyDestructionNotAllowed(
  currentVersion: number | null,
  rule: string | null = 'owner_policy',
  cause?: unknown,
): AppError {
  return new AppError('key_destruction_not_allowed', {
    fields: {
      rule,
      current_version: currentVersion,
      next_version: currentVersion === null ? null : currentVersion + 1,
    },
    cause,
  });
}

/** The signer's store keeps no policies at all (TREASURY_SIGNER_DATABASE_URL unset on the signer). */
export const NO_POLICY_STORE = 'no_policy_store';
/** The signer keeps policy state only for wallets whose key it holds (signer/owner-policy/held-wallet-keys.ts). */
export const UNKNOWN_WALLET = 'unknown_wallet';

/** The AppError of a signer refusal about owner-signed policies; undefined for any other. */
export function ownerPolicyError(err: SignerError): AppError | undefined {
  const d = err.details ?? {};
  switch (err.code) {
    case 'policy_denied':
      // A refusal that names no rule is not one the API can answer as a denial.
      return d.violations?.length
        ? new SignerPolicyDenial(err, d.violations)
        : new AppError('internal_error', { cause: err });
    case 'policy_signature_invalid':
      return new AppError('policy_signature_invalid', { fields: { rule: d.rule ?? null }, cause: err });
    case 'key_not_found':
      // Only the policy refusal: a key reference the signer cannot find on a signing path stays an internal error.
      return d.rule === UNKNOWN_WALLET
        ? new AppError('policy_signature_invalid', {
            message:
              'The signer holds no key it knows of for this wallet, so it keeps no signed policy for it; nothing was stored.',
            fields: { rule: UNKNOWN_WALLET },
            cause: err,
          })
        : undefined;
    case 'policy_version_stale':
      return new AppError('policy_version_stale', {
        fields: { current_version: d.current_version ?? null },
        cause: err,
      });
    case 'key_destruction_not_allowed':
      return keyDestructionNotAllowed(d.current_version ?? null, d.rule ?? null, err);
    case 'policy_store_unavailable':
      return new AppError('signer_unavailable', {
        message:
          d.rule === NO_POLICY_STORE
            ? 'The signer keeps no policy store: owner-signed policies are off on this deployment.'
            : "The signer's policy store cannot be reached; retry shortly.",
        fields: { reason: 'policy_store_unavailable', ...(d.rule ? { rule: d.rule } : {}) },
        headers: { 'Retry-After': '1' },
        cause: err,
      });
    default:
      return undefined;
  }
}
