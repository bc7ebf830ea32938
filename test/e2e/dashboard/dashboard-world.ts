/**
 * What the dashboard browser suites stand on: a local chain (anvil, test USDC, faucet, facilitator), a test
 * Treasury reading balances from it, Chromium pointed at it (../../support/dashboard-browser.ts), and an
 * owner with an agent and funded wallets, made through the public API as `xx init` makes them.
 */
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { fundFromFaucet, startTestChain, type TestChain } from '../../support/chain-harness.js';
import { installFakeWallet, launchDashboardBrowser, PUBLIC_ORIGIN } from '../../support/dashboard-browser.js';
import { signInBody } from '../../support/sign-in.js';

export interface Owner {
  key: PrivateKeyAccount;
  session: string;
  accountId: string;
  agentId: string;
  /** The agent's long-lived PAT (as `xx init` keeps it). */
  agentPat: { id: string; pat: string };
  wallets: Array<{ id: string; address: `0x${string}`; label: string; account_id: string }>;
}

export interface DashboardWorld {
  chain: TestChain;
  t: TestTreasury;
  browser: Browser;
}

export async function startDashboardWorld(): Promise<DashboardWorld> {
  const chain = await startTestChain();
  const t = await startTestTreasury({
    extraEnv: { TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': chain.rpcUrl }) },
  });
  const browser = await launchDashboardBrowser(t.baseUrl);
  return { chain, t, browser };
}

export async function stopDashboardWorld(world: Partial<DashboardWorld>): Promise<void> {
  await world.browser?.close();
  await world.t?.stop();
  await world.chain?.stop();
}

/**
 * Registers the suite's before/after hooks that start and stop a world, and returns the world, filled in
 * by the before hook (its fields are read inside tests and later hooks, never at describe time).
 */
export function useDashboardWorld(): DashboardWorld {
  const world = {} as DashboardWorld;
  before(async () => {
    Object.assign(world, await startDashboardWorld());
  });
  after(async () => {
    await stopDashboardWorld(world);
  });
  return world;
}

/** Signs a new owner in (SIWE naming the public origin) and returns a sign-in session for `key`. */
export async function ownerSession(t: TestTreasury, key: PrivateKeyAccount) {
  const res = await t.request('POST', '/v1/identity/init', { body: await signInBody(t, PUBLIC_ORIGIN, key) });
  assert.ok(res.status < 300, JSON.stringify(res.body));
  return res.body as { session: string; account_id: string; agent_id: string };
}

/** A new owner whose agent holds `labels.length` wallets, each funded with `fundUsd` test USDC. */
export async function newOwner(
  world: DashboardWorld,
  labels: string[],
  options: { fundUsd?: string; dailyCapUsd?: string } = {},
): Promise<Owner> {
  const key = privateKeyToAccount(generatePrivateKey());
  const grant = await ownerSession(world.t, key);
  const created = await world.t.request('POST', '/v1/pats', {
    token: grant.session,
    body: {
      scope_type: 'agent',
      label: 'agent',
      ...(options.dailyCapUsd ? { daily_cap_usd: options.dailyCapUsd } : {}),
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const wallets: Owner['wallets'] = [];
  for (const label of labels) {
    // The owner makes the wallets, as `xx init` does (a wallet the agent's PAT makes gets a default policy
    // within the PAT's cap of that moment, which the pages' cap flows are not about).
    const w = await world.t.request('POST', `/v1/agents/${grant.agent_id}/wallets`, {
      token: grant.session,
      body: { label },
    });
    assert.equal(w.status, 201, JSON.stringify(w.body));
    wallets.push({ id: w.body.id, address: w.body.address, label, account_id: w.body.account_id });
    if (options.fundUsd) await fundFromFaucet(world.chain, w.body.address, options.fundUsd);
  }
  return {
    key,
    session: grant.session,
    accountId: grant.account_id,
    agentId: grant.agent_id,
    agentPat: { id: created.body.id, pat: created.body.pat },
    wallets,
  };
}

/** What `xx dashboard` mints: a single-use PAT of the agent, within the agent's PAT (its cap), 10 minutes. */
export async function handoffPat(t: TestTreasury, owner: Owner): Promise<{ id: string; pat: string }> {
  const res = await t.request('POST', '/v1/pats', {
    token: owner.session,
    body: {
      scope_type: 'agent',
      scope_id: owner.agentId,
      parent_pat_id: owner.agentPat.id,
      single_use: true,
      label: 'dashboard handoff',
      expires_in_seconds: 600,
    },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

/**
 * What a browser does before `xx dashboard`: a tab of `context` opens /dashboard/cli-handoff, which shows the
 * code the browser asks with; the tab is closed and the code returned (the CLI opens its link in a new tab).
 */
export async function askForHandoff(context: BrowserContext): Promise<string> {
  const tab = await context.newPage();
  try {
    await tab.goto('/dashboard/cli-handoff');
    return (await tab.getByTestId('handoff-state').innerText()).trim();
  } finally {
    await tab.close();
  }
}

/** The link `xx dashboard --state <state>` opens. */
export const handoffLink = (pat: string, state: string, next?: string): string =>
  `/dashboard/cli-handoff#pat=${encodeURIComponent(pat)}&state=${encodeURIComponent(state)}${
    next === undefined ? '' : `&next=${encodeURIComponent(next)}`
  }`;

/**
 * On the wallet page, the owner (`key`, as the page's browser wallet) signs in, signs `policyJson` as the wallet's
 * first owner-signed policy and saves it; returns once the page says it is owner-signed by `key` at version 1.
 */
export async function signFirstPolicyOnWalletPage(
  page: Page,
  key: PrivateKeyAccount,
  walletId: string,
  policyJson: string,
): Promise<void> {
  await installFakeWallet(page, key);
  await page.goto(`/dashboard/wallets/${walletId}`);
  await page.getByRole('button', { name: 'Sign in with a browser wallet' }).click();
  const state = page.getByTestId('owner-policy');
  await state.getByText("Not owner-signed: only the signer's ceilings apply").waitFor();
  await page.getByLabel('Policy (JSON)').fill(policyJson);
  await page.getByRole('button', { name: 'Save policy' }).click();
  await page.getByText('Policy saved.').waitFor();
  await state.getByText(`Owner-signed by ${key.address} (version 1)`, { exact: true }).waitFor();
}
