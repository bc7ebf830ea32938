/**
 * Owner-signed policies, the API's side (docs/adr/0012-owner-signed-policies.md): GET /v1/wallets/{id}/policy
 * with what the signer holds (`owner_policy`, read from the signer: ./read-owner-policy.ts), and PUT
 * /v1/wallets/{id}/policy/signed — the document goes to the signer (`set_wallet_policy`), which verifies it
 * against the wallet's policy authority and its version; only once the signer accepted it is the policy
 * stored with its version, issued_at, signature (and the EIP-712 form it is over) and authority, and a
 * `policy.signed` audit row carrying the signature and its form, in one transaction under the wallet's lock. Every
 * accepted document is stored and audited, the same policy under a newer version too: the signer already holds
 * it, and the stored version must follow. The form is relayed to the signer as the owner named it.
 *
 * Defends: a policy stored as signed that the signer did not accept; an older accepted document overwriting a
 * newer one stored meanwhile (409 `policy_version_stale`); a document stored for an address the wallet no
 * longer has (rotated meanwhile: 403 `policy_signature_invalid`, rule `wallet_address`). Does not defend: the
 * signature's validity (the signer's to decide), nor who the bearer is (the routes').
 */
import type { SetWalletPolicyResult } from '../../../signer/protocol/signer-protocol.js';
import { counterpartyKey } from '../../../policy/counterparty-address.js';
import type { WalletPolicy as WalletPolicyDocument } from '../../../policy/policy-schema.js';
import { DEFAULT_POLICY_SIGNATURE_FORM, type PolicySignatureForm } from '../../../policy/signed-policy.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { AccountService } from '../platform/account-service.js';
import type { SignerGateway } from '../signing/signer-gateway.js';
import type { WalletPolicy } from '../../shared/api-responses/pay-responses.js';
import { ownerPolicyView, readOwnerPolicy } from './read-owner-policy.js';
import { storedPolicyHash } from './policy-audit.js';
import type { WalletStore } from './store/wallet-store.js';
import { activeOf, type WalletService } from './wallet-service.js';

/** A signed policy as PUT …/policy/signed takes it (validated and normalised by the route's schema). */
export interface SignedPolicyInput {
  policy: WalletPolicyDocument;
  version: number;
  issued_at: number;
  signature: string;
  /** The EIP-712 form the signature is over (policy/signed-policy.ts); absent: `policy_hash`. */
  form?: PolicySignatureForm;
}

export interface OwnerPolicyServiceDeps {
  store: WalletStore;
  signer: Pick<SignerGateway, 'call'>;
  wallets: Pick<WalletService, 'getActive' | 'changed'>;
  /** The wallet's account: its key references go with the document, for a wallet the signer has no record of. */
  accounts: Pick<AccountService, 'get'>;
  metrics: TreasuryMetrics;
}

export class OwnerPolicyService {
  constructor(private readonly deps: OwnerPolicyServiceDeps) {}

  /** The wallet's stored policy and what the signer holds of it. */
  async read(accountId: string, walletId: string): Promise<WalletPolicy> {
    const wallet = await this.deps.wallets.getActive(accountId, walletId);
    return {
      wallet_id: wallet.id,
      policy: wallet.policy,
      owner_policy: await readOwnerPolicy(this.deps.signer, wallet.address, wallet.account_id),
    };
  }

  /** The signer verifies and keeps the document first; only then is it stored, with its audit row. */
  async setSigned(accountId: string, walletId: string, input: SignedPolicyInput, actor: string): Promise<WalletPolicy> {
    const wallet = await this.deps.wallets.getActive(accountId, walletId);
    const account = await this.deps.accounts.get(accountId);
    const accepted = await this.count(() =>
      this.deps.signer.call(
        'set_wallet_policy',
        {
          address: wallet.address,
          // Proves the key held (signer/owner-policy/held-wallet-keys.ts) when the signer has no record of the wallet;
          // a wallet whose key is gone has none to prove.
          ...(wallet.wallet_key_ref === null
            ? {}
            : { wallet_key: { account_key_ref: account.account_key_ref, wallet_key_ref: wallet.wallet_key_ref } }),
          policy: input.policy,
          version: input.version,
          issued_at: input.issued_at,
          signature: input.signature,
          // Relayed as the owner named it: the signer recovers the signature under this form only.
          ...(input.form === undefined ? {} : { form: input.form }),
        },
        wallet.account_id,
      ),
    );
    const row = await this.count(() =>
      this.deps.store.change(walletId, async (found) => {
        const current = activeOf(accountId, walletId, found);
        refuseStale(current.address, wallet.address, current.policy_version, accepted.version);
        const document = {
          version: accepted.version,
          issuedAt: input.issued_at,
          signature: input.signature,
          form: input.form ?? DEFAULT_POLICY_SIGNATURE_FORM,
          authority: accepted.authority,
        };
        return {
          change: { kind: 'set_signed_policy', policy: input.policy, document },
          audit: { eventType: 'policy.signed', actor, payload: signedPayload(current.policy, input, accepted) },
        };
      }),
    );
    this.deps.wallets.changed(walletId);
    this.deps.metrics.walletOperations.inc({ operation: 'set_signed_policy', outcome: 'ok' });
    const owner_policy = ownerPolicyView({
      authority: accepted.authority,
      current: { version: accepted.version, policy_hash: accepted.policy_hash, issued_at: input.issued_at },
    });
    return { wallet_id: row.id, policy: row.policy, owner_policy };
  }

  /** Counts a refusal by its code in the wallet operations' metric, and passes it on. */
  private async count<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      const outcome = err instanceof AppError ? err.code : 'failed';
      this.deps.metrics.walletOperations.inc({ operation: 'set_signed_policy', outcome });
      throw err;
    }
  }
}

/**
 * Under the wallet's lock: the document names the address it was accepted for, which must still be the
 * wallet's (0x compared in any case, base58 exactly); a newer document stored meanwhile stays (the signer holds that one too).
 */
function refuseStale(address: string, signedFor: string, stored: string | null | undefined, version: number): void {
  if (counterpartyKey(address) !== counterpartyKey(signedFor))
    throw new AppError('policy_signature_invalid', { fields: { rule: 'wallet_address' } });
  if (stored != null && Number(stored) >= version)
    throw new AppError('policy_version_stale', { fields: { current_version: Number(stored) } });
}

/**
 * The `policy.signed` audit payload: the previous policy's hash (the chain holds that policy whole, in the
 * row that set it: ./policy-audit.ts), the new policy, and the document with its signature.
 */
function signedPayload(previous: Record<string, unknown>, input: SignedPolicyInput, accepted: SetWalletPolicyResult) {
  return {
    previous_policy_hash: storedPolicyHash(previous),
    policy: input.policy,
    version: accepted.version,
    issued_at: input.issued_at,
    policy_hash: accepted.policy_hash,
    signature: input.signature,
    form: input.form ?? DEFAULT_POLICY_SIGNATURE_FORM,
    authority: accepted.authority,
  };
}
