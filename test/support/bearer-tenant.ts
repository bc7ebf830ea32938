/**
 * One tenant of a test Treasury with a bearer of every kind and an object of every kind those bearers reach,
 * for tables of who may call what (test/integration/api/route-bearer-table.test.ts). A tenant is a platform
 * account signed in with a fresh key (its agent, its agent's Treasury account and a wallet there, an `mpp`
 * seller with an origin and an endpoint) and a Treasury account the operator minted (its legacy api key, a
 * wallet, and a child Treasury PAT the api key minted). Bearers:
 * - `operator`: TREASURY_ADMIN_TOKEN;
 * - `api_key`: the minted account's legacy `xx_treasury_sk_` key;
 * - `owner_session`: the SIWE sign-in session; `exchanged_session`: a session exchanged from `agent_pat`;
 * - `treasury_pat`: a Treasury PAT the owner minted (the agent's Treasury account); `gate_treasury_pat`: one
 *   minted with `gate: true` (the Treasury and the gate scope);
 * - `child_treasury_pat`: a Treasury PAT the api key minted (POST /v1/treasuries/{id}/pats);
 * - `agent_pat`: the owner's agent PAT; `session_agent_pat`: an agent PAT minted `within_session` (the owner's
 *   session's child); `handoff_pat`: a single-use agent PAT minted within `agent_pat` as `xx dashboard` mints it
 *   (a new one per use);
 * - `service_pat`: the service PAT the seller was created with; `minted_service_pat`: one the owner minted on
 *   POST /v1/sellers/{id}/pats; `gate_pat`: a gate-only PAT.
 * Every setup step asserts its answer, so a table never runs on a half-built tenant.
 */
import assert from 'node:assert/strict';
import type { TestTreasury } from './api-harness.js';
import { signInWithNewKey } from './sign-in.js';

export const BEARERS = [
  'operator',
  'api_key',
  'owner_session',
  'exchanged_session',
  'treasury_pat',
  'gate_treasury_pat',
  'child_treasury_pat',
  'agent_pat',
  'session_agent_pat',
  'handoff_pat',
  'service_pat',
  'minted_service_pat',
  'gate_pat',
] as const;
export type Bearer = (typeof BEARERS)[number];

/** The seller's origin: a loopback port nothing listens on (verification answers 502 `origin_unreachable`). */
export const UNREACHABLE_ORIGIN = 'http://127.0.0.1:9';

export interface Tenant {
  accountId: string;
  agentId: string;
  /** The agent's Treasury account (reached by the owner's Treasury PAT, the agent PAT and its sessions). */
  agentTreasuryId: string;
  /** The operator-minted Treasury account (reached by its api key and the child Treasury PAT). */
  mintedTreasuryId: string;
  /** A wallet of each Treasury account. */
  agentWalletId: string;
  mintedWalletId: string;
  sellerId: string;
  endpointId: string;
  /** An agent PAT of the account that is no bearer here (a target for PAT routes). */
  targetPatId: string;
  /** The bearer's token; a handoff PAT is minted anew on each call (it is single-use). */
  token(bearer: Bearer): Promise<string>;
  freshWallet(side: 'agent' | 'minted'): Promise<string>;
  freshEndpoint(): Promise<string>;
  /** The id of a new agent PAT of the account. */
  freshPat(): Promise<string>;
  /** The id of a new service PAT of the seller. */
  freshServicePat(): Promise<string>;
}

type Api = Pick<TestTreasury, 'request' | 'adminToken'>;

async function ok(api: Api, what: string, method: string, path: string, token: string, body?: unknown) {
  const res = await api.request(method, path, { token, ...(body === undefined ? {} : { body }) });
  assert.ok(res.status >= 200 && res.status < 300, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

let tenants = 0;

export async function createTenant(api: Api): Promise<Tenant> {
  const n = ++tenants;
  const owner = await signInWithNewKey(api);
  const session = owner.session;
  const pat = (what: string, body: unknown) => ok(api, what, 'POST', '/v1/pats', session, body);
  const treasuryPat = await pat('treasury PAT', { scope_type: 'treasury' });
  const gateTreasuryPat = await pat('gate Treasury PAT', { scope_type: 'treasury', gate: true });
  const agentPat = await pat('agent PAT', { scope_type: 'agent', scope_id: owner.agent_id });
  const sessionAgentPat = await pat('within-session agent PAT', {
    scope_type: 'agent',
    scope_id: owner.agent_id,
    within_session: true,
  });
  const gatePat = await pat('gate PAT', { scope_type: 'gate' });
  const target = await pat('target PAT', { scope_type: 'agent', label: 'target' });
  const exchanged = await ok(api, 'exchange', 'POST', '/v1/identity/exchange-pat', agentPat.pat);
  const seller = await ok(api, 'seller', 'POST', '/v1/sellers', session, {
    name: `Table seller ${n}`,
    protocol: 'mpp',
    origin: UNREACHABLE_ORIGIN,
  });
  let endpoints = 0;
  const freshEndpoint = async () =>
    (
      await ok(api, 'endpoint', 'POST', `/v1/sellers/${seller.seller_id}/endpoints`, session, {
        path: `/e${endpoints++}`,
        price: '0.01',
      })
    ).endpoint_id as string;
  const mintedServicePat = await ok(api, 'service PAT', 'POST', `/v1/sellers/${seller.seller_id}/pats`, session, {});
  const minted = await ok(api, 'minted account', 'POST', '/v1/treasury', api.adminToken, {
    owner_type: 'org',
    owner_id: `table-${n}`,
  });
  const child = await ok(api, 'child PAT', 'POST', `/v1/treasuries/${minted.id}/pats`, minted.api_key, {
    label: 'child',
  });
  const freshWallet = async (side: 'agent' | 'minted') =>
    (await ok(api, 'wallet', 'POST', '/v1/wallets', side === 'agent' ? treasuryPat.pat : minted.api_key, {}))
      .id as string;
  const tokens: Record<Exclude<Bearer, 'handoff_pat'>, string> = {
    operator: api.adminToken,
    api_key: minted.api_key,
    owner_session: session,
    exchanged_session: exchanged.session,
    treasury_pat: treasuryPat.pat,
    gate_treasury_pat: gateTreasuryPat.pat,
    child_treasury_pat: child.token,
    agent_pat: agentPat.pat,
    session_agent_pat: sessionAgentPat.pat,
    service_pat: seller.pat,
    minted_service_pat: mintedServicePat.pat,
    gate_pat: gatePat.pat,
  };
  assert.ok(tokens.child_treasury_pat, `child PAT: ${JSON.stringify(child)}`);
  return {
    accountId: owner.account_id,
    agentId: owner.agent_id,
    agentTreasuryId: treasuryPat.scope_id,
    mintedTreasuryId: minted.id,
    agentWalletId: await freshWallet('agent'),
    mintedWalletId: await freshWallet('minted'),
    sellerId: seller.seller_id,
    endpointId: await freshEndpoint(),
    targetPatId: target.id,
    async token(bearer) {
      if (bearer !== 'handoff_pat') return tokens[bearer];
      // As `xx dashboard` mints it (src/cli/commands/account/auth-commands.ts): within the agent PAT.
      const handoff = await pat('handoff PAT', {
        scope_type: 'agent',
        parent_pat_id: agentPat.id,
        single_use: true,
        label: 'dashboard handoff',
        expires_in_seconds: 600,
      });
      return handoff.pat as string;
    },
    freshWallet,
    freshEndpoint,
    freshPat: async () => (await pat('fresh PAT', { scope_type: 'agent' })).id as string,
    freshServicePat: async () =>
      (await ok(api, 'service PAT', 'POST', `/v1/sellers/${seller.seller_id}/pats`, session, {})).id as string,
  };
}
