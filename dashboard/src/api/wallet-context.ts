/**
 * A wallet page's wallet and the bearer to read it with: a session from the CLI reads its agent's wallet
 * directly; an owner finds the wallet among the account's agents (GET /v1/agents) and reads it with a
 * Treasury PAT for its Treasury account (./wallet-access.ts).
 */
import type { AgentPage, WalletView } from '../../../src/shared/api-responses/wallet-responses';
import { api, bearer, reply } from './client';
import { getSession } from './session';
import { walletToken } from './wallet-access';

export async function loadWallet(walletId: string): Promise<{ wallet: WalletView; token: string }> {
  const session = getSession();
  if (!session) throw new Error('not signed in');
  let token = session.token;
  if (session.origin === 'sign_in') {
    const agents = await reply<AgentPage>(api.GET('/v1/agents', { params: { query: { limit: 100 } } }));
    const found = agents.agents.flatMap((a) => a.wallets).find((w) => w.id === walletId);
    if (!found) throw new Error(`No active wallet ${walletId} among this account's agents.`);
    token = await walletToken(found.account_id);
  }
  const wallet = await reply<WalletView>(
    api.GET('/v1/wallets/{id}', { params: { path: { id: walletId } }, headers: bearer(token) }),
  );
  return { wallet, token };
}
