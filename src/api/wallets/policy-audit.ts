/**
 * What a policy write appends to the wallet's audit chain (`policy.updated`, ./wallet-service.ts;
 * `policy.signed`, ./owner-policy-service.ts): the new policy whole, and the policy it replaced by its hash —
 * the chain already holds that one whole, in the row that set it (`wallet.created`, `policy.updated` or
 * `policy.signed`). And whether a write changes anything at all: an unchanged policy writes no row.
 *
 * Defends: the shared disk filled with audit rows nobody may delete — a policy at its bounds (2,000
 * addresses, 256 capability caps) is a row of about 130 KB, which a copy of the previous one would double, and
 * rewriting the same policy in a loop would add one per request. Does not defend: a loop alternating two
 * different policies (the `policy` rate-limit bucket bounds that: src/api/http/middleware/rate-limit.ts).
 */
import { keccak256, stringToBytes } from 'viem';
import { canonicalJson } from '../../../base/canonical-json.js';

/**
 * keccak-256 over the canonical JSON of the policy as stored: for a stored policy (normalised when it was
 * written) the same as policyDocumentHash (policy/signed-policy.ts), the `policy_hash` of an owner-signed one.
 */
export function storedPolicyHash(policy: Record<string, unknown>): `0x${string}` {
  return keccak256(stringToBytes(canonicalJson(policy)));
}

/** Whether two policies are the same (keys in any order: PostgreSQL's jsonb gives them back in its own). */
export function samePolicy(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
