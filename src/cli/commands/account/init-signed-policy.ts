/**
 * `xx init` signs the policy it gives a new managed wallet (version 1) with the seed's Base key, so a fresh
 * account is owner-signed from the start (./owner-signed-policy.ts): the signer then enforces that policy on
 * every payment, whatever the API's database says later. The document is recorded locally for `xx wallet policy
 * verify` (./signed-policy-record.ts).
 *
 * A refusal does not undo the onboarding: the wallet keeps the policy the API holds (which the API enforces)
 * and init says, in its output, that it is not owner-signed, why (the error's code and message), and the
 * command that signs it. Only CLI errors (the API's or the CLI's own) are caught; anything else is a bug and
 * propagates.
 *
 * Defends: an onboarding that silently leaves a wallet under the API's word alone. Does not defend: a server
 * that cannot keep signed policies (no signer policy store) — init reports it, it cannot fix it.
 */
import type { LocalAccount } from 'viem/accounts';
import type { WalletPolicy } from '../../../../policy/policy-schema.js';
import type { ApiClient } from '../../core/api-client.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import type { OwnerPolicy } from '../../../shared/api-responses/pay-responses.js';
import { describeOwnerPolicy } from '../../../shared/describe-owner-policy.js';
import { putOwnerSignedPolicy, type PolicyWallet } from './owner-signed-policy.js';
import { recordSetDocument } from './signed-policy-record.js';

/** Why init could not sign: the error's stable code and its message. */
export interface PolicySigningFailure {
  error_code: string;
  user_message: string;
}

/** Signs and sets `policy` on the new `wallet` with `signer`; the failure, when there is one, as data. */
export async function signInitPolicy(
  ctx: CliContext,
  session: ApiClient,
  signer: LocalAccount,
  wallet: PolicyWallet,
  policy: WalletPolicy,
): Promise<PolicySigningFailure | null> {
  try {
    await ctx.spin('Signing the wallet policy', () =>
      putOwnerSignedPolicy(session, { evm: signer }, wallet, policy, (document) =>
        recordSetDocument(ctx.paths, wallet.id, document),
      ),
    );
    return null;
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    return { error_code: err.code, user_message: err.userMessage };
  }
}

/** What init says of the first wallet's owner-signed state, and, when signing failed, why and how to sign later. */
export function ownerPolicyLines(
  walletId: string | undefined,
  owner: OwnerPolicy | null,
  failure: PolicySigningFailure | null,
): string[] {
  if (walletId === undefined) return [];
  return [
    ...(owner ? [`${describeOwnerPolicy(owner)}.`] : []),
    ...(failure
      ? [
          `The wallet policy is NOT owner-signed (${failure.error_code}: ${failure.user_message}); sign it with \`xx wallet policy set ${walletId} --file <policy.json>\`.`,
        ]
      : []),
  ];
}
