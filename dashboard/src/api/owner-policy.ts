/**
 * A wallet's owner-signed policy from the dashboard (docs/dashboard.md, "Owner-signed policies"): the wallet's
 * `owner_policy` (GET /v1/wallets/{id}/policy), and a policy signed by the owner's browser wallet — the EIP-712
 * `WalletPolicy` document (policy/signed-policy.ts) for the wallet's address at `next_version`, in its
 * `policy_text` form (domain version "2": the policy's canonical JSON as a string field, so the wallet shows the
 * owner the policy itself, not a hash to sign blind), asked with `eth_signTypedData_v4` from the address the owner
 * signed in with — then PUT to …/policy/signed with `form: 'policy_text'`. The signer checks the signature, under
 * that form, against the wallet's recorded authority; this page only asks for it.
 *
 * Defends: a policy signed other than the one shown (the document spells out the policy this page sends, in its
 * canonical form); an owner asked to sign an opaque hash. Does not defend: a browser wallet that signs something
 * else than it shows — the signer then refuses the document, nothing is set.
 */
import { walletPolicySchema, type WalletPolicy } from '../../../policy/policy-schema';
import { policyTypedDataV4 } from '../../../policy/signed-policy';
import type { OwnerPolicy, WalletPolicy as WalletPolicyReply } from '../../../src/shared/api-responses/pay-responses';
import { describeOwnerPolicy } from '../../../src/shared/describe-owner-policy';
import { api, bearer, reply } from './client';
import { getSession } from './session';
import { browserWallet } from './sign-in';

export { describeOwnerPolicy, type OwnerPolicy, type WalletPolicyReply };

export function readOwnerPolicy(walletId: string, token: string): Promise<WalletPolicyReply> {
  return reply<WalletPolicyReply>(
    api.GET('/v1/wallets/{id}/policy', { params: { path: { id: walletId } }, headers: bearer(token) }),
  );
}

/** Asks the browser wallet to sign `policy` for the wallet at `version`, and sets it signed. */
export async function saveSignedPolicy(input: {
  walletId: string;
  walletAddress: string;
  token: string;
  policy: WalletPolicy;
  version: number;
}): Promise<WalletPolicyReply> {
  const provider = browserWallet();
  const signer = getSession()?.address;
  if (!provider || !signer) throw new Error('Signing a policy needs the browser wallet the owner signed in with.');
  const policy = walletPolicySchema.parse(input.policy);
  const issuedAt = Math.floor(Date.now() / 1000);
  const document = { wallet: input.walletAddress, policy, version: input.version, issuedAt };
  const typed = policyTypedDataV4(document, 'policy_text');
  const signature = await provider.request({ method: 'eth_signTypedData_v4', params: [signer, JSON.stringify(typed)] });
  if (typeof signature !== 'string') throw new Error('The browser wallet returned no signature.');
  return reply<WalletPolicyReply>(
    api.PUT('/v1/wallets/{id}/policy/signed', {
      params: { path: { id: input.walletId } },
      headers: bearer(input.token),
      body: { policy, version: input.version, issued_at: issuedAt, signature, form: 'policy_text' },
    }),
  );
}
