/**
 * Whether a wallet's owner lets its key be destroyed (docs/adr/0012-owner-signed-policies.md): under an
 * owner-signed policy the signer destroys the key (`destroy_wallet_key`, which a rotation and a revocation end
 * with) only when that policy carries `allow_key_destruction: true`, and refuses `key_destruction_not_allowed`
 * otherwise. Asked before a rotation or revocation writes anything, so the API refuses up front (409
 * `key_destruction_not_allowed`, with the signed policy's `current_version` and `next_version`) what the signer
 * would refuse once the change committed.
 *
 * The signer says which document it holds (`get_wallet_policy`: its version and policy hash, not the policy);
 * the policy is the API's stored copy, believed only when it is provably that document — its canonical hash
 * (policy/signed-policy.ts) the signer's. A copy behind the signer's, or rewritten, allows nothing. A signer
 * that keeps no policy store holds no signed policy (nothing to ask); a store it cannot reach is 503
 * `signer_unavailable` (./read-owner-policy.ts), and nothing is written.
 *
 * Defends: a rotation or revocation committed whose key the signer then keeps (the wallet changed, its key
 * retired and never destroyed, behind a success); the API's own copy of the policy claiming a flag the owner
 * never signed. Does not defend: the key itself — the signer refuses its destruction whatever the API decides
 * here — nor an owner policy that changes between this check and the destruction (the key then stays retired:
 * ./wallet-service.ts).
 */
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { policyDocumentHash } from '../../../policy/signed-policy.js';
import { keyDestructionNotAllowed } from '../signing/owner-policy-errors.js';
import type { SignerGateway } from '../signing/signer-gateway.js';
import { readOwnerPolicy } from './read-owner-policy.js';
import type { WalletRow } from './store/wallet-store.js';

/** Refuses (409 `key_destruction_not_allowed`) unless the wallet's owner-signed policy, if any, allows it. */
export async function refuseKeyDestructionNotAllowed(
  signer: Pick<SignerGateway, 'call'>,
  wallet: Pick<WalletRow, 'address' | 'policy' | 'account_id'>,
): Promise<void> {
  const held = await readOwnerPolicy(signer, wallet.address, wallet.account_id);
  if (held.version === null) return;
  if (held.policy_hash !== null && storedCopyAllows(wallet.policy, held.policy_hash)) return;
  throw keyDestructionNotAllowed(held.version);
}

/** The stored policy says `allow_key_destruction: true` and is the document the signer holds (the same hash). */
function storedCopyAllows(policy: Record<string, unknown>, signerHash: string): boolean {
  const parsed = walletPolicySchema.safeParse(policy);
  if (!parsed.success || parsed.data.allow_key_destruction !== true) return false;
  return policyDocumentHash(parsed.data).toLowerCase() === signerHash.toLowerCase();
}
