/** Signs in to a test Treasury with a fresh EVM key (SIWE, viem-signed) and returns the session grant. */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import type { TestTreasury } from './api-harness.js';

export async function signInWithNewKey(
  t: TestTreasury,
): Promise<{ session: string; account_id: string; agent_id: string; expires_at: string }> {
  const who = privateKeyToAccount(generatePrivateKey());
  const nonce = (await t.request('POST', '/v1/identity/nonce')).body.nonce;
  const message = createSiweMessage({
    domain: 'treasury.test',
    address: who.address,
    uri: 'http://treasury.test',
    version: '1',
    chainId: 84532,
    nonce,
    issuedAt: new Date(),
  });
  const res = await t.request('POST', '/v1/identity/init', {
    body: { message, signature: await who.signMessage({ message }), chain: 'evm' },
  });
  if (res.status >= 300) throw new Error(`sign-in failed: ${JSON.stringify(res.body)}`);
  return res.body;
}
