/**
 * Signing in to a test Treasury with a fresh EVM key (SIWE, viem-signed): the `/v1/identity/init` body, and
 * the whole sign-in returning the session grant.
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import type { TestTreasury } from './api-harness.js';

/** What a sign-in needs of the API: a POST with a JSON body (the nonce is asked for with none). */
export interface SignInApi {
  request(method: string, path: string, options?: { body?: unknown }): Promise<{ status: number; body: any }>;
}

/**
 * The `/v1/identity/init` body for `who` (a fresh key by default): a SIWE message naming `origin` (its host as
 * the domain) with a nonce asked of `api` (which must answer 201), and its signature.
 */
export async function signInBody(
  api: SignInApi,
  origin = 'http://treasury.test',
  who: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey()),
): Promise<{ message: string; signature: string; chain: 'evm' }> {
  const nonce = await api.request('POST', '/v1/identity/nonce');
  assert.equal(nonce.status, 201, JSON.stringify(nonce.body));
  const message = createSiweMessage({
    domain: new URL(origin).host,
    address: who.address,
    uri: origin,
    version: '1',
    chainId: 84532,
    nonce: nonce.body.nonce,
    issuedAt: new Date(),
  });
  return { message, signature: await who.signMessage({ message }), chain: 'evm' };
}

/** Signs in with a fresh key; the session grant and the key's address. */
export async function signInWithNewKey(
  t: Pick<TestTreasury, 'request'>,
): Promise<{ session: string; account_id: string; agent_id: string; expires_at: string; address: `0x${string}` }> {
  const who = privateKeyToAccount(generatePrivateKey());
  const res = await t.request('POST', '/v1/identity/init', { body: await signInBody(t, undefined, who) });
  if (res.status >= 300) throw new Error(`sign-in failed: ${JSON.stringify(res.body)}`);
  return { ...res.body, address: who.address };
}
