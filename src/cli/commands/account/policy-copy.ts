/**
 * The API's copy of a wallet's policy, believed by `xx wallet policy set` only when it is provably the document
 * the signer holds (docs/adr/0012-owner-signed-policies.md): `set` without `--file` changes the current policy
 * — the copy GET /v1/wallets/{id}/policy answers from the API's database — and the owner then signs the result.
 * Under an owner-signed policy that copy is built on only when its canonical hash (policy/signed-policy.ts)
 * equals the `owner_policy.policy_hash` of the same reply (the hash the API read from the signer); otherwise
 * `policy_copy_mismatch`, before anything is signed, and the owner gives the whole policy with `--file`.
 * A wallet with no signed policy has nothing to compare against: its copy is what the owner first signs.
 *
 * Defends: a rewritten database (a looser cap, a payee added, `allow_key_destruction: true`) slipping rules
 * into what the owner signs as "the current policy with one change". Does not defend: an API process that lies
 * about the signer's hash as well (then only `--file` is the owner's own word), nor the policy in `--file`.
 */
import { walletPolicySchema } from '../../../../policy/policy-schema.js';
import { policyDocumentHash } from '../../../../policy/signed-policy.js';
import type { WalletPolicy as WalletPolicyReply } from '../../../shared/api-responses/pay-responses.js';
import { CliError } from '../../core/cli-error.js';

/** The reply's policy, when its wallet has no signed policy or the copy hashes to the signed one; else throws. */
export function provenPolicyCopy(held: WalletPolicyReply): Record<string, unknown> {
  const owner = held.owner_policy;
  if (owner.state !== 'owner_signed' && owner.policy_hash === null) return held.policy;
  const parsed = walletPolicySchema.safeParse(held.policy);
  const copyHash = parsed.success ? policyDocumentHash(parsed.data) : null;
  if (copyHash !== null && owner.policy_hash !== null && copyHash.toLowerCase() === owner.policy_hash.toLowerCase())
    return held.policy;
  throw new CliError({
    code: 'policy_copy_mismatch',
    userMessage:
      `The API's copy of the policy of ${held.wallet_id} is not the owner-signed one the signer holds` +
      `${owner.version !== null ? ` (version ${owner.version})` : ''}, so it cannot be changed flag by flag; ` +
      `nothing was signed. Give the whole policy with \`xx wallet policy set ${held.wallet_id} --file <policy.json>\`.`,
    details: { wallet_id: held.wallet_id, version: owner.version, policy_hash: owner.policy_hash, copy_hash: copyHash },
  });
}
