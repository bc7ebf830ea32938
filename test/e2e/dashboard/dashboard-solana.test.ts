/**
 * The dashboard with a Solana wallet, in real Chromium against the real API (TREASURY_SOLANA_RPC_URL on the offline
 * Solana chain, ops/solana/): the overview lists the wallet with its base58 address exactly as created (never
 * case-folded or checksummed), its network by name (the CAIP-2 id in the title), its USDC balance read from the
 * chain and today's spend (the probe pays a Solana burn address); the wallet page shows the address and network,
 * and its dry run takes a base58 payee; the owner signs the Solana wallet's policy there with the browser wallet
 * (the EIP-712 document naming the base58 address), and the signer then refuses a Solana payment above it.
 */
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { pino } from 'pino';
import { generateKeyPairSigner } from '@solana/kit';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { launchDashboardBrowser, newDashboardPage, PUBLIC_ORIGIN, spaGo } from '../../support/dashboard-browser.js';
import {
  askForHandoff,
  handoffLink,
  handoffPat,
  ownerSession,
  signFirstPolicyOnWalletPage,
  type Owner,
} from './dashboard-world.js';
import { solanaPaymentRequirements } from '../../builders/payment-requirements.js';

const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

describe('dashboard: a Solana wallet (Chromium, API, signer, offline Solana chain)', function () {
  this.timeout(240_000);
  let solana: LocalSolana;
  let t: TestTreasury;
  let browser: Browser;

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    t = await startTestTreasury({ extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl } });
    browser = await launchDashboardBrowser(t.baseUrl);
  });
  after(async () => {
    await browser?.close();
    await t?.stop();
    await solana?.stop();
  });

  /** A new owner (signed in with `key`), an agent PAT, and a funded Solana wallet of theirs. */
  async function ownerWithSolanaWallet(key = privateKeyToAccount(generatePrivateKey())) {
    const grant = await ownerSession(t, key);
    const pat = await t.request('POST', '/v1/pats', {
      token: grant.session,
      body: { scope_type: 'agent', label: 'agent' },
    });
    assert.equal(pat.status, 201, JSON.stringify(pat.body));
    const made = await t.request('POST', `/v1/agents/${grant.agent_id}/wallets`, {
      token: grant.session,
      body: { label: 'sol', chain: 'solana-devnet', policy: { daily_cap_usd: '5' } },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const wallet = made.body as { id: string; address: string; network: string };
    assert.equal(wallet.network, DEVNET);
    await solana.faucet.fundUsdc(wallet.address as never, 2_000_000n);
    const owner = { session: grant.session, agentId: grant.agent_id, agentPat: pat.body } as Owner;
    return { key, owner, wallet };
  }

  it('lists and shows the base58 address as created, the network by name, the balance and spend; dry-runs a base58 payee', async () => {
    const { owner, wallet } = await ownerWithSolanaWallet();

    const { context, page } = await newDashboardPage(browser);
    try {
      await page.goto(handoffLink((await handoffPat(t, owner)).pat, await askForHandoff(context)));
      await page.waitForURL(`${PUBLIC_ORIGIN}/dashboard/`);
      const row = page.getByTestId('wallet-row');
      await row.waitFor();
      assert.equal((await row.getByTestId('wallet-address').innerText()).trim(), wallet.address);
      const network = row.getByTestId('wallet-network');
      assert.equal((await network.innerText()).trim(), 'solana-devnet');
      assert.equal(await network.getAttribute('title'), DEVNET);
      await row.getByText('$2', { exact: false }).first().waitFor();
      await row.getByText('$0 of $5').waitFor();

      await spaGo(page, `/dashboard/wallets/${wallet.id}`);
      await page.getByTestId('balance').waitFor();
      assert.equal((await page.getByTestId('wallet-address').innerText()).trim(), wallet.address);
      assert.match(await page.getByTestId('wallet-network').innerText(), new RegExp(`solana-devnet\\s+${DEVNET}`));
      await page.getByLabel('Recipient address').fill((await generateKeyPairSigner()).address);
      await page.getByLabel('Amount (USD)').fill('0.25');
      await page.getByTestId('dry-run-result').getByText('Would pass.').waitFor();
    } finally {
      await context.close();
    }
  });

  it('the owner signs the Solana wallet’s policy with the browser wallet; the signer refuses a Solana payment above it', async () => {
    const { key, owner, wallet } = await ownerWithSolanaWallet();
    const { context, page } = await newDashboardPage(browser);
    try {
      await signFirstPolicyOnWalletPage(page, key, wallet.id, '{"per_tx_cap_usd": "0.5"}');
    } finally {
      await context.close();
    }
    // A compromised API loosening its own copy changes nothing: the signer holds the document the page signed.
    await t.db.knex('wallets').where({ id: wallet.id }).update({ policy: {} });
    const refused = await t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
      token: owner.agentPat.pat,
      body: {
        payment_requirements: solanaPaymentRequirements(solana, '750000', (await generateKeyPairSigner()).address),
      },
    });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.deepEqual([refused.body.error_code, refused.body.decided_by], ['policy_denied', 'signer']);
  });
});
