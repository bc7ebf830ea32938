/**
 * The bench's owner-signed policies (docs/adr/0012-owner-signed-policies.md), so that `npm run bench` measures
 * the signer's second check on the path a signed wallet takes (its row locked, its windows summed, the policy
 * evaluated) as well as on wallets without one: an approver key made for the run (the bench signer's
 * TREASURY_SIGNER_POLICY_APPROVER; bench wallets are made with an api key, so the approver is their authority),
 * and that key's signature over each bench wallet's policy, sent as the API's clients send it
 * (PUT /v1/wallets/{id}/policy/signed) or straight to the signer's socket for the signer-alone ceiling.
 * Not for tests: it signs with a throwaway key and checks only that every document was accepted.
 */
import type { ChildProcess } from 'node:child_process';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { walletPolicySchema } from '../../policy/policy-schema.js';
import { policyTypedData } from '../../policy/signed-policy.js';
import { SignerClient } from '../../signer/protocol/signer-client.js';
import { driveAlternating, type DriveResult } from './closed-loop.js';
import { signerSignOnce, stopChild } from './service-bench-parts.js';

/** A throwaway approver for one bench run. */
export function benchApprover(): PrivateKeyAccount {
  return privateKeyToAccount(generatePrivateKey());
}

/** `policy` as version 1 for `wallet`, signed by `approver`: the fields of set_wallet_policy / PUT …/signed. */
async function signedDocument(approver: PrivateKeyAccount, wallet: string, policy: Record<string, unknown>) {
  const issuedAt = Math.floor(Date.now() / 1000);
  const parsed = walletPolicySchema.parse(policy);
  const signature = await approver.signTypedData(
    policyTypedData({ wallet: wallet as `0x${string}`, policy: parsed, version: 1, issuedAt }),
  );
  return { policy, version: 1, issued_at: issuedAt, signature };
}

/** Signs `policy` for each wallet (by id) through the API, 16 at a time; throws on any answer but 200. */
export async function signBenchPolicies(
  api: string,
  bearer: string,
  walletIds: readonly string[],
  approver: PrivateKeyAccount,
  policy: Record<string, unknown>,
): Promise<void> {
  const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
  const signOne = async (id: string) => {
    const wallet = (await (await fetch(`${api}/v1/wallets/${id}`, { headers })).json()) as { address: string };
    const body = JSON.stringify(await signedDocument(approver, wallet.address, policy));
    const res = await fetch(`${api}/v1/wallets/${id}/policy/signed`, { method: 'PUT', headers, body });
    if (res.status !== 200) throw new Error(`signed policy answered ${res.status}: ${await res.text()}`);
  };
  for (let i = 0; i < walletIds.length; i += 16) await Promise.all(walletIds.slice(i, i + 16).map(signOne));
}

/** Signs `policy` for one wallet straight through the signer's socket (the signer-alone ceiling's wallet). */
export async function signSignerWalletPolicy(
  client: SignerClient,
  address: string,
  approver: PrivateKeyAccount,
  policy: Record<string, unknown>,
): Promise<void> {
  await client.call('set_wallet_policy', { address, ...(await signedDocument(approver, address, policy)) } as never);
}

export interface SignerStoreCeilingsOptions {
  /** The bench signer (with its store), the account and wallet its signer-alone ceiling signs from. */
  client: SignerClient;
  account: string;
  wallet: { wallet_key_ref: string; address: string };
  signOnce: () => Promise<unknown>;
  approver: PrivateKeyAccount;
  policy: Record<string, unknown>;
  seconds: number;
  /** Starts a second signer process, without the store, listening on `bareSocket`. */
  startBare: () => Promise<ChildProcess>;
  bareSocket: string;
  usdc: string;
  payTo: string;
}

/**
 * The signer-alone ceiling (8 loops through the socket) three ways in the same run, in alternating one-second
 * slices (`seconds` of each): the bench signer on a wallet without a signed policy, the same signer on a wallet
 * whose policy is signed (every signature decided on the store's snapshot path), and a second signer process
 * without the store — the ceiling the store's cost is read against.
 */
export async function signerStoreCeilings(
  o: SignerStoreCeilingsOptions,
): Promise<{ unsigned: DriveResult; signed: DriveResult; bare: DriveResult }> {
  const child = await o.startBare();
  const bareClient = new SignerClient({ socketPath: o.bareSocket });
  try {
    const account = (await bareClient.createAccountKey()).account_key_ref;
    const bareWallet = await bareClient.createWalletKey({ account_key_ref: account });
    const openWallet = await o.client.createWalletKey({ account_key_ref: o.account });
    await signSignerWalletPolicy(o.client, o.wallet.address, o.approver, o.policy);
    const variants = {
      unsigned: signerSignOnce(o.client, o.account, openWallet, o.usdc, o.payTo),
      signed: o.signOnce,
      bare: signerSignOnce(bareClient, account, bareWallet, o.usdc, o.payTo),
    };
    for (const once of Object.values(variants)) for (let i = 0; i < 200; i++) await once();
    const asLoop = (once: () => Promise<unknown>) => async () => {
      await once();
      return true;
    };
    const totals = await driveAlternating(
      { unsigned: asLoop(variants.unsigned), signed: asLoop(variants.signed), bare: asLoop(variants.bare) },
      { rounds: o.seconds, concurrency: 8 },
    );
    return totals;
  } finally {
    bareClient.close();
    await stopChild(child);
  }
}
