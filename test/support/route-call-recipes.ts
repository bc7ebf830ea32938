/**
 * How a table of who may call what (test/integration/api/route-bearer-table.test.ts) calls a route: a recipe
 * takes whose objects the call names (`tenant`) and who calls (`bearer`) and gives the path and body. The
 * bearer picks the Treasury account a wallet or account id is taken from: the operator-minted one for its
 * api key, its child Treasury PAT and the operator; the agent's for everyone else. Bodies that must differ
 * on each call (names, paths, transaction hashes) are made anew by each call.
 */
import type { Bearer, Tenant } from './bearer-tenant.js';

/** Whose objects a call names (`tenant`) and who calls (`bearer`: its Treasury account picks the wallet). */
export interface Target {
  tenant: Tenant;
  bearer: Bearer;
}
export type Call = { path: string; body?: unknown };
export type Recipe = (x: Target) => Call | Promise<Call>;

/** The Treasury account side of a bearer: the operator-minted one for its api key and child PAT. */
export const mintedSide = (b: Bearer) => b === 'api_key' || b === 'child_treasury_pat' || b === 'operator';
export const walletOf = (x: Target) => (mintedSide(x.bearer) ? x.tenant.mintedWalletId : x.tenant.agentWalletId);
export const treasuryOf = (x: Target) => (mintedSide(x.bearer) ? x.tenant.mintedTreasuryId : x.tenant.agentTreasuryId);

let counter = 0;
export const unique = () => `${Date.now().toString(36)}${counter++}`;
export const ledgerRow = () => ({
  tx_hash: `0x${(counter++).toString(16).padStart(64, '0')}`,
  payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
  amount: '1000',
  network: 'eip155:84532',
});

export const fixed =
  (path: string, body?: () => unknown): Recipe =>
  () => ({ path, body: body?.() });
export const wallet =
  (suffix: string, body?: unknown): Recipe =>
  (x) => ({ path: `/v1/wallets/${walletOf(x)}${suffix}`, body });
export const freshWallet =
  (suffix: string, body?: unknown): Recipe =>
  async (x) => ({
    path: `/v1/wallets/${await x.tenant.freshWallet(mintedSide(x.bearer) ? 'minted' : 'agent')}${suffix}`,
    body,
  });
export const seller =
  (suffix: string, body?: () => unknown): Recipe =>
  (x) => ({ path: `/v1/sellers/${x.tenant.sellerId}${suffix}`, body: body?.() });
export const agent =
  (suffix: string, body?: unknown): Recipe =>
  (x) => ({ path: `/v1/agents/${x.tenant.agentId}${suffix}`, body });
export const ledgerRead =
  (path: string): Recipe =>
  (x) => ({ path: `${path}${path.includes('?') ? '&' : '?'}seller_id=${x.tenant.sellerId}` });
