/**
 * The owner signs a wallet's policy with the seed (docs/cli.md, "Owner-signed policies"): read the wallet's
 * `owner_policy` (GET /v1/wallets/{id}/policy), sign the EIP-712 `WalletPolicy` document in its `policy_text`
 * form (policy/signed-policy.ts: the policy spelled out, as the dashboard asks a browser wallet to sign it) for the
 * wallet's address (0x or base58) at `next_version` with the seed's Base key
 * (m/44'/60'/0'/0/0, the key the owner signs in with) — or, when the wallet's authority is the seed's Solana key
 * (an owner who signed in with Solana), the same document as the Ed25519 statement (policy/policy-statement.ts)
 * with that key (m/44'/501'/0'/0') — and PUT it to /v1/wallets/{id}/policy/signed. The
 * signer verifies the signature against the authority it recorded for the wallet and enforces the policy on
 * every payment after that, whatever the API's database says. The caller is told the document the API said it set
 * (`onSet`), which it records locally for `xx wallet policy verify` (./signed-policy-record.ts).
 *
 * Wallet routes take a Treasury bearer, not the owner's sign-in session: the owner session mints a Treasury
 * PAT of the wallet's account for five minutes, uses it for these two calls and revokes it (as the dashboard
 * does, dashboard/src/api/wallet-access.ts).
 *
 * Defends: a policy sent for signing other than the one the owner asked for (the document's hash binds every
 * field of the policy the CLI built); signing with a key that is not the wallet's authority (refused here,
 * before anything is signed, naming the authority). Does not defend: what the owner chose to sign, nor an API
 * that answers a wrong `next_version` (the signer refuses a version that does not rise).
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { policyStatementBytes } from '../../../../policy/policy-statement.js';
import type { WalletPolicy } from '../../../../policy/policy-schema.js';
import {
  policyDocumentHash,
  policyTextTypedData,
  type PolicySignatureFields,
} from '../../../../policy/signed-policy.js';
import { createdPatSchema } from '../../../shared/api-responses/pat-responses.js';
import {
  walletPolicySchema as walletPolicyReplySchema,
  type OwnerPolicy,
  type WalletPolicy as WalletPolicyReply,
} from '../../../shared/api-responses/pay-responses.js';
import { ApiClient } from '../../core/api-client.js';
import { CliError } from '../../core/cli-error.js';

/** The body of PUT /v1/wallets/{id}/policy/signed: the policy and the signed document's fields. */
export type SignedPolicyBody = { policy: WalletPolicy } & PolicySignatureFields;

/** The managed wallet whose policy is signed: its id, its address (what the document names), its account. */
export interface PolicyWallet {
  id: string;
  address: string;
  account_id: string;
}

/** Throws `policy_authority_mismatch` unless `signer` may sign the wallet's policy as the signer recorded it. */
export function checkPolicyAuthority(owner: OwnerPolicy, signer: string): void {
  const authority = owner.authority;
  // No authority recorded: the wallet is bound to whoever signs its first policy (the signer decides).
  if (!authority) return;
  if (authority.address !== null && authority.address.toLowerCase() === signer.toLowerCase()) return;
  const who =
    authority.kind === 'approver'
      ? `the deployment's policy approver${authority.address ? ` ${authority.address}` : ''}`
      : `${authority.address ?? 'another key'} (${authority.kind})`;
  throw new CliError({
    code: 'policy_authority_mismatch',
    userMessage: `This wallet's policy is signed by ${who}, not by this seed's key ${signer}; nothing was signed.`,
    details: { authority, signer },
  });
}

/** The seed's keys a policy may be signed with: its Base key, and its Solana key (base58 address, secret key). */
export interface PolicyKeys {
  evm: LocalAccount;
  solana?: { address: string; secretKey: Uint8Array };
}

/**
 * Which of the seed's keys signs the wallet's policy: the Solana key when it is the recorded authority, else the
 * Base key — which must then be the authority (`checkPolicyAuthority` throws before anything is signed).
 */
export function policyKeyFor(owner: OwnerPolicy, keys: PolicyKeys): 'evm' | 'solana' {
  if (keys.solana && owner.authority?.address === keys.solana.address) return 'solana';
  checkPolicyAuthority(owner, keys.evm.address);
  return 'evm';
}

/** What a document is about: `policy` on `walletAddress` at `version`, issued `now`. */
export interface PolicyBodyInput {
  walletAddress: string;
  policy: WalletPolicy;
  version: number;
  now: Date;
}

const documentOf = (input: PolicyBodyInput) => ({
  wallet: input.walletAddress,
  policy: input.policy,
  version: input.version,
  issuedAt: Math.floor(input.now.getTime() / 1000),
});

/** The signed document (EIP-712 in its `policy_text` form, by `signer`), as the signed PUT takes it. */
export async function signPolicyBody(signer: LocalAccount, input: PolicyBodyInput): Promise<SignedPolicyBody> {
  const document = documentOf(input);
  const signature = await signer.signTypedData(policyTextTypedData(document));
  return { policy: input.policy, version: input.version, issued_at: document.issuedAt, signature, form: 'policy_text' };
}

/** The same document as the Ed25519 statement, signed by a Solana key (64 bytes, 0x hex), as the signed PUT takes it. */
export function signPolicyStatement(key: { secretKey: Uint8Array }, input: PolicyBodyInput): SignedPolicyBody {
  const document = documentOf(input);
  const signature = bytesToHex(ed25519.sign(policyStatementBytes(document), key.secretKey));
  return { policy: input.policy, version: input.version, issued_at: document.issuedAt, signature };
}

/**
 * Runs `fn` with a Treasury PAT of `accountId` minted by the owner's session (labelled `label`), revoked
 * afterwards. Also what `xx wallet rotate|revoke` call the wallet routes with (./wallet-retire-commands.ts).
 */
export async function withTreasuryBearer<T>(
  owner: ApiClient,
  accountId: string,
  fn: (treasury: ApiClient) => Promise<T>,
  label = 'xx owner-signed policy',
): Promise<T> {
  const minted = await owner.request('POST', '/v1/pats', {
    body: { scope_type: 'treasury', scope_id: accountId, label, expires_in_seconds: 300 },
    reply: createdPatSchema,
  });
  try {
    return await fn(new ApiClient({ baseUrl: owner.baseUrl, token: minted.pat }));
  } finally {
    await owner.request('DELETE', `/v1/pats/${minted.id}`).catch(() => undefined);
  }
}

/** A document this CLI signed and the API said it set: what `onSet` is told (./signed-policy-record.ts keeps it). */
export interface SetDocument {
  walletAddress: string;
  version: number;
  issued_at: number;
  policy_hash: string;
}

/**
 * Reads the wallet's `owner_policy`, signs `policy` at its `next_version` and PUTs it signed; the API's answer.
 * `onSet` is told the document once the API answered that it set it.
 */
export async function putOwnerSignedPolicy(
  owner: ApiClient,
  keys: PolicyKeys,
  wallet: PolicyWallet,
  policy: WalletPolicy,
  onSet?: (document: SetDocument) => void,
): Promise<WalletPolicyReply> {
  return withTreasuryBearer(owner, wallet.account_id, async (treasury) => {
    const current = await treasury.request('GET', `/v1/wallets/${wallet.id}/policy`, {
      reply: walletPolicyReplySchema,
    });
    const key = policyKeyFor(current.owner_policy, keys);
    const input = {
      walletAddress: wallet.address,
      policy,
      version: current.owner_policy.next_version,
      now: new Date(),
    };
    const body =
      key === 'solana' && keys.solana ? signPolicyStatement(keys.solana, input) : await signPolicyBody(keys.evm, input);
    const set = await treasury.request('PUT', `/v1/wallets/${wallet.id}/policy/signed`, {
      body,
      reply: walletPolicyReplySchema,
    });
    const signed = { version: body.version, issued_at: body.issued_at, policy_hash: policyDocumentHash(policy) };
    onSet?.({ walletAddress: wallet.address, ...signed });
    return set;
  });
}
