/**
 * The cast of the buyer end-to-end suites (test/e2e/sdk-buyer, upto-payments, upto-eip2612-permit), on a
 * Treasury and a test chain the suite started: an agent signed in with a new key holding an agent PAT and
 * the SDK client on it, its wallets, an official @x402/express seller and our Koa seller, each on a
 * loopback port the suite's LoopbackServers closes; and the balances a payment should move.
 * What it defends: that every suite checks the answers it sets up on (201 for the PAT and each wallet), in
 * one place, so a suite cannot go on with a half-made agent.
 * What it does not: start or stop anything but the sellers' servers (the suites start and stop their own
 * chain and Treasury), nor fund or approve anything.
 */
import assert from 'node:assert/strict';
import express from 'express';
import Koa from 'koa';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { paymentMiddleware } from '@x402/express';
import type { Address } from 'viem';
import { x402Koa } from 'treasury/koa';
import { TreasuryClient } from 'treasury/sdk';
import type { TestTreasury } from './api-harness.js';
import { readTokenBalance, type TestChain } from './chain-harness.js';
import type { LoopbackServers } from './loopback-servers.js';
import { sellerWithEndpoint } from './seller-pay-to.js';
import { signInWithNewKey } from './sign-in.js';

/** The test chain's network, the one every seller here charges on. */
const NETWORK = 'eip155:84532';

export interface AgentBuyer {
  session: string;
  agentId: string;
  pat: { id: string; pat: string };
  client: TreasuryClient;
}

/** An agent signed in with a new key, an agent PAT (label and daily cap as given) and the SDK client on it. */
export async function agentBuyer(
  t: TestTreasury,
  patBody: { label: string; daily_cap_usd?: string },
): Promise<AgentBuyer> {
  const me = await signInWithNewKey(t);
  const pat = await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'agent', ...patBody } });
  assert.equal(pat.status, 201, JSON.stringify(pat.body));
  const client = new TreasuryClient({ apiUrl: t.baseUrl, token: pat.body.pat });
  return { session: me.session, agentId: me.agent_id, pat: pat.body, client };
}

/** A new wallet of agent `agentId`, created with its PAT `token`. */
export async function newAgentWallet(
  t: TestTreasury,
  agentId: string,
  token: string,
  label: string,
): Promise<{ id: string; address: `0x${string}` }> {
  const created = await t.request('POST', `/v1/agents/${agentId}/wallets`, { token, body: { label } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body;
}

type SchemeServer = Parameters<x402ResourceServer['register']>[1];
type ExpressRoutes = Parameters<typeof paymentMiddleware>[0];

/**
 * An official @x402/express seller settling through `facilitatorUrl` with `schemes`: `routes` behind its
 * payment middleware, then `handlers` (GET, by path). Its URL.
 */
export function expressSeller(
  servers: LoopbackServers,
  facilitatorUrl: string,
  schemes: SchemeServer[],
  routes: ExpressRoutes,
  handlers: Record<string, express.RequestHandler>,
): Promise<string> {
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl }));
  for (const scheme of schemes) resourceServer.register(NETWORK, scheme);
  const app = express();
  app.use(paymentMiddleware(routes, resourceServer));
  for (const [path, handler] of Object.entries(handlers)) app.get(path, handler);
  return servers.listen(app);
}

type KoaPaywall = Parameters<typeof x402Koa>[0];

/**
 * Our Koa seller: a seller of `session`'s account with one endpoint, its PAT in the paywall (`paywall`
 * says the rest, reporting to `t`), then `handler`. The seller and its URL.
 */
export async function koaSeller(
  t: TestTreasury,
  session: string,
  servers: LoopbackServers,
  listing: { seller: { name: string; slug: string }; endpoint: { path: string; price: string } },
  paywall: Omit<KoaPaywall, 'token' | 'api_url' | 'env'>,
  handler: Koa.Middleware,
): Promise<{ seller: { seller_id: string; pat: string }; url: string }> {
  const seller = await sellerWithEndpoint(t, session, listing.seller, listing.endpoint);
  const koa = new Koa();
  koa.use(x402Koa({ ...paywall, token: seller.pat, api_url: t.baseUrl, env: {} }));
  koa.use(handler);
  return { seller, url: await servers.listen(koa.callback()) };
}

/** The buyer's and the seller's token balances on the test chain, read one after the other. */
export async function readBalances(
  chain: Pick<TestChain, 'publicClient' | 'usdc'>,
  buyer: Address,
  seller: Address,
): Promise<[bigint, bigint]> {
  return [await readTokenBalance(chain, buyer), await readTokenBalance(chain, seller)];
}
