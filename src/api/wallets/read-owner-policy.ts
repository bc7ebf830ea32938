/**
 * What the signer holds of a wallet's policy (docs/adr/0012-owner-signed-policies.md), read from the signer
 * itself (`get_wallet_policy`) — never from the API's own copy: the wallet's policy authority and the signed
 * document it enforces, as the `owner_policy` of GET /v1/wallets/{id}/policy. A signer that keeps no policy
 * store at all (`no_policy_store`) holds none: `ceilings_only`. A store it cannot reach is 503
 * `signer_unavailable` (callers that must know, such as an unsigned policy change, fail closed).
 *
 * Defends: the API answering from its own, possibly rewritten, database what only the signer can say. Does
 * not defend: a signer that lies (it is the trusted party).
 */
import { displayCounterparty } from '../../../policy/counterparty-address.js';
import type { GetWalletPolicyResult } from '../../../signer/protocol/signer-protocol.js';
import { AppError } from '../errors/app-error.js';
import type { SignerGateway } from '../signing/signer-gateway.js';
import { NO_POLICY_STORE } from '../signing/owner-policy-errors.js';
import type { OwnerPolicy } from '../../shared/api-responses/pay-responses.js';

/** The signer's answer as the API shows it (0x addresses in their EIP-55 form). */
export function ownerPolicyView(held: Pick<GetWalletPolicyResult, 'authority' | 'current'>): OwnerPolicy {
  const { current, authority } = held;
  return {
    state: current ? 'owner_signed' : 'ceilings_only',
    authority: authority && {
      kind: authority.kind,
      address: authority.address && displayCounterparty(authority.address),
    },
    version: current?.version ?? null,
    policy_hash: current?.policy_hash ?? null,
    issued_at: current?.issued_at ?? null,
    next_version: (current?.version ?? 0) + 1,
  };
}

/** `tenant`: the wallet's Treasury account, whose share of the signer calls the read waits for (../signing/signer-gateway.ts). */
export async function readOwnerPolicy(
  signer: Pick<SignerGateway, 'call'>,
  address: string,
  tenant: string,
): Promise<OwnerPolicy> {
  try {
    return ownerPolicyView(await signer.call('get_wallet_policy', { address }, tenant));
  } catch (err) {
    if (err instanceof AppError && err.code === 'signer_unavailable' && err.fields.rule === NO_POLICY_STORE)
      return ownerPolicyView({ authority: null, current: null });
    throw err;
  }
}
