/**
 * The bearer of a wallet route and the account whose wallets it reaches: a Treasury bearer's own account;
 * where a route lets agents in (`agentAllowed`: reads, policy evaluation, pay, transfer, settlement), also an
 * agent PAT's — or a session exchanged from one — agent account (src/api/auth/authenticator.ts).
 *
 * `WalletRouteDeps` is what every wallet route module is built with (the wallet, pay and history routes).
 *
 * Defends: an agent bearer reaching a Treasury-only wallet route (`requireTreasuryScope` refuses it). Does not
 * defend: which wallet of the account the route names (each route reads the wallet within `accountId`).
 */
import type { Knex } from 'knex';
import type { WalletService } from './wallet-service.js';
import { requireTreasuryScope, resolveWalletScope, type Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';

/** The bearer's check (and the database, where an agent's account is looked up) and the wallets. */
export interface WalletRouteDeps {
  auth: Authenticator;
  knex: Knex;
  wallets: WalletService;
}

export async function walletBearer(
  deps: Pick<WalletRouteDeps, 'auth' | 'knex'>,
  header: string,
  agentAllowed: boolean,
): Promise<{ principal: Principal; accountId: string }> {
  const principal = await deps.auth.authenticate(header);
  const accountId = agentAllowed
    ? await resolveWalletScope(deps.knex, principal, true)
    : requireTreasuryScope(principal);
  return { principal, accountId };
}
