/**
 * What the API answers about a wallet's owner-signed policy (docs/adr/0012-owner-signed-policies.md): GET
 * /v1/wallets/{id}/policy and PUT …/policy/signed answer the stored policy with `owner_policy`, the signer's
 * own word on it (who may sign the wallet's policy, which signed version it enforces, the next version to
 * sign). Defined once here: the `xx` CLI and the dashboard read it with these schemas and say it with
 * `describeOwnerPolicy`.
 *
 * Defends: a client signing against a reply of the wrong shape (a version that is not a bounded integer, an
 * authority address that is not one). Does not defend: a reply of the right shape with wrong content — the
 * signer verifies every signed document itself, whatever the API said.
 */
import { z } from 'zod';
import { MAX_ISSUED_AT, MAX_POLICY_VERSION } from '../../../policy/signed-policy.js';
import { walletPolicySchema } from './pay-responses.js';
import { bytes32Field, evmAddressField } from './response-fields.js';

const versionField = z.number().int().min(1).max(MAX_POLICY_VERSION);

/** `owner_signed`: the signer holds a signed policy for the wallet; `ceilings_only`: only its own ceilings apply. */
export const policyStateSchema = z.enum(['owner_signed', 'ceilings_only']);
export type PolicyState = z.infer<typeof policyStateSchema>;

/** Who may sign the wallet's policy, as the signer recorded it (address null: an approver it does not name). */
export const policyAuthorityViewSchema = z.object({
  kind: z.enum(['owner', 'approver', 'first_signer']),
  address: evmAddressField.nullable(),
});
export type PolicyAuthorityView = z.infer<typeof policyAuthorityViewSchema>;

export const ownerPolicySchema = z.object({
  state: policyStateSchema,
  authority: policyAuthorityViewSchema.nullable(),
  version: versionField.nullable(),
  policy_hash: bytes32Field.nullable(),
  issued_at: z.number().int().min(0).max(MAX_ISSUED_AT).nullable(),
  /** The version the next signed document must carry (the current one + 1, or 1). */
  next_version: versionField,
});
export type OwnerPolicy = z.infer<typeof ownerPolicySchema>;

/** GET /v1/wallets/{id}/policy and PUT …/policy/signed: the policy as stored, and the signer's view of it. */
export const walletOwnerPolicySchema = walletPolicySchema.extend({ owner_policy: ownerPolicySchema });
export type WalletOwnerPolicy = z.infer<typeof walletOwnerPolicySchema>;

/** One line on a wallet's owner-signed state, as the CLI and the dashboard both say it. */
export function describeOwnerPolicy(owner: OwnerPolicy): string {
  if (owner.state === 'owner_signed')
    return `Owner-signed by ${owner.authority?.address ?? 'an unnamed authority'} (version ${owner.version ?? '?'})`;
  return "Not owner-signed: only the signer's ceilings apply";
}
