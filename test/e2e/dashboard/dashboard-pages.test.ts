/**
 * The dashboard's pages in real Chromium against a real Treasury (PostgreSQL, SoftHSM, a local chain):
 * - Tokens: following MGMT_6014's settings_url, the owner signs in with a browser wallet (a viem local
 *   account behind window.ethereum), raises the PAT's daily cap, and the payment refused before now passes;
 *   a session handed over by the CLI is asked for the owner's sign-in instead.
 * - Wallet: the policy editor names a mistake with its field as the API's schema does, saves a per-payment
 *   cap, and the live dry run shows the rule that refuses a larger payment and the headroom left; real
 *   payments then appear in the recent decisions (the refused one with its pd_ id and rule) and the audit
 *   trail shows its chain verified. The page asks the browser wallet to sign the policy spelled out (the
 *   `policy_text` form: domain version "2", the canonical JSON as a string) and the signer enforces it. Under the
 *   policy the page signed, revoking shows the API's refusal (key_destruction_not_allowed) and how to allow it;
 *   the wallet stays.
 * - Treasury PATs the pages mint for an owner: the overview's rows, loading at once, share one "dashboard" PAT
 *   for the account, and Sign out leaves none live; a tab closed while signed in leaves its PAT no longer than
 *   its session; a wallet sign-in after a CLI handoff logs the exchanged session out.
 * - Sellers: a paid call to the sandbox's demo seller (ops/sandbox/demo-seller.ts, our x402 middleware)
 *   appears on the seller's ledger page, opened with the seller's service PAT; the revenue chart draws; the
 *   CSV export downloads the row.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createX402Buyer, TreasuryClient } from 'treasury/sdk';
import { startDemoSeller, type DemoSeller } from '../../../ops/sandbox/demo-seller.js';
import { anvilDevAccount } from '../../support/chain-harness.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { canonicalJson } from '../../../base/canonical-json.js';
import { normalizePolicy } from '../../../policy/normalize-policy.js';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { policyDocumentHash } from '../../../policy/signed-policy.js';
import {
  installFakeWallet,
  newDashboardPage,
  PUBLIC_ORIGIN,
  screenshot,
  typedDataRequests,
} from '../../support/dashboard-browser.js';
import {
  askForHandoff,
  handoffLink,
  handoffPat,
  newOwner,
  ownerSession,
  signFirstPolicyOnWalletPage,
  useDashboardWorld,
} from './dashboard-world.js';

describe('dashboard pages (Chromium)', function () {
  this.timeout(180_000);
  const world = useDashboardWorld();

  const pay = (token: string, walletId: string, amount: string) =>
    world.t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token,
      body: { payment_requirements: paymentRequirements({ amount }) },
    });

  it('raising a PAT’s cap in the Tokens page makes the next MGMT_6014-refused payment pass', async () => {
    const owner = await newOwner(world, ['capped'], { fundUsd: '1', dailyCapUsd: '0.01' });
    const wallet = owner.wallets[0]!;
    assert.equal((await pay(owner.agentPat.pat, wallet.id, '10000')).status, 200, 'the first cent fits the cap');
    const refused = await pay(owner.agentPat.pat, wallet.id, '10000');
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error_code, 'MGMT_6014');
    const settingsUrl: string = refused.body.recovery.settings_url;
    assert.equal(settingsUrl, `${PUBLIC_ORIGIN}/dashboard/settings/pats/${owner.agentPat.id}`);

    // A session handed over by the CLI acts as the agent: the page asks for the owner's sign-in.
    const agentView = await newDashboardPage(world.browser);
    try {
      const handoff = await handoffPat(world.t, owner);
      const state = await askForHandoff(agentView.context);
      await agentView.page.goto(handoffLink(handoff.pat, state, `/settings/pats/${owner.agentPat.id}`));
      await agentView.page.waitForURL(settingsUrl);
      await agentView.page.getByRole('heading', { name: 'Sign in as the owner' }).waitFor();
      assert.equal(await agentView.page.getByLabel('Daily cap (USD)').count(), 0);
    } finally {
      await agentView.context.close();
    }

    const { context, page } = await newDashboardPage(world.browser);
    try {
      await installFakeWallet(page, owner.key);
      await page.goto(settingsUrl);
      await page.getByRole('button', { name: 'Sign in with a browser wallet' }).click();
      const cap = page.getByLabel('Daily cap (USD)');
      await cap.waitFor();
      assert.equal(await page.getByTestId('current-cap').innerText(), '$0.01');
      await screenshot(page, 'tokens-mgmt6014');
      await cap.fill('0.0000001');
      assert.equal(await page.getByRole('button', { name: 'Save cap' }).isDisabled(), true, 'seven decimals refused');
      await cap.fill('1');
      await page.getByRole('button', { name: 'Save cap' }).click();
      await page.getByText('Daily cap set to $1.').waitFor();
      assert.equal(await page.getByTestId('current-cap').innerText(), '$1');
    } finally {
      await context.close();
    }
    const passed = await pay(owner.agentPat.pat, wallet.id, '10000');
    assert.equal(passed.status, 200, JSON.stringify(passed.body));
  });

  it('a policy edit plus a dry run shows the refusing rule and the headroom', async () => {
    const owner = await newOwner(world, ['ops'], { fundUsd: '1' });
    const wallet = owner.wallets[0]!;
    const { context, page } = await newDashboardPage(world.browser);
    try {
      await installFakeWallet(page, owner.key);
      await page.goto(`/dashboard/wallets/${wallet.id}`);
      await page.getByRole('button', { name: 'Sign in with a browser wallet' }).click();
      const editor = page.getByLabel('Policy (JSON)');
      await editor.waitFor();
      await page.getByTestId('balance').getByText('$1').waitFor();

      // Checked as typed, with the API's own schema: a zero cap and an unknown field are named.
      await editor.fill('{"per_tx_cap_usd": "0", "daily_limit": "5"}');
      const issues = page.getByTestId('policy-issues');
      await issues.waitFor();
      const listed = await issues.innerText();
      assert.match(listed, /per_tx_cap_usd: a cap must be above zero/);
      assert.match(listed, /daily_limit/);
      assert.equal(await page.getByRole('button', { name: 'Save policy' }).isDisabled(), true);

      await editor.fill('{"per_tx_cap_usd": "0.5", "daily_cap_usd": "2"}');
      await page.getByRole('button', { name: 'Save policy' }).click();
      await page.getByText('Policy saved.').waitFor();
      const stored = await world.t.request('GET', `/v1/wallets/${wallet.id}/policy`, { token: owner.agentPat.pat });
      assert.deepEqual(stored.body.policy, { per_tx_cap_usd: '0.5', daily_cap_usd: '2' });

      await page.getByLabel('Recipient address').fill('0x209693Bc6afc0C5328bA36FaF03C514EF312287C');
      await page.getByLabel('Amount (USD)').fill('0.75');
      const result = page.getByTestId('dry-run-result');
      await result.getByText('Would be refused.').waitFor();
      assert.match(await page.getByTestId('violations').innerText(), /per_tx_cap_usd/);
      assert.doesNotMatch(await page.getByTestId('violations').innerText(), /daily_cap_usd/);
      assert.match(await result.innerText(), /daily_usd\s+2/);
      await screenshot(page, 'wallet-dry-run');

      await page.getByLabel('Amount (USD)').fill('0.25');
      await result.getByText('Would pass.').waitFor();
      assert.match(await result.innerText(), /daily_usd\s+1\.75/, 'headroom after this payment');
      // A dry run counts nothing: the day's room is whole again on the API.
      const again = await world.t.request('POST', `/v1/wallets/${wallet.id}/policy/evaluate`, {
        token: owner.agentPat.pat,
        body: { to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', amount_usd: '0.25' },
      });
      assert.equal(again.body.headroom.daily_usd, '1.75');

      // Real payments: the refused one is listed with the pd_ id its 403 named and the rule; the audit chain holds.
      const refusedPay = await pay(owner.agentPat.pat, wallet.id, '750000');
      assert.equal(refusedPay.status, 403, JSON.stringify(refusedPay.body));
      assert.equal((await pay(owner.agentPat.pat, wallet.id, '250000')).status, 200);
      await page.getByRole('button', { name: 'Refresh decisions' }).click();
      const refusedRow = page.getByTestId('decision-row').filter({ hasText: refusedPay.body.decision_id });
      await refusedRow.waitFor();
      assert.match(await refusedRow.innerText(), /refused[\s\S]*per_tx_cap_usd/);
      assert.equal(await page.getByTestId('decision-row').count(), 2);
      await page.getByRole('button', { name: 'Refresh audit trail' }).click();
      await page.getByTestId('audit-state').getByText('chain verified').waitFor();
      await screenshot(page, 'wallet-history');
    } finally {
      await context.close();
    }
  });

  it('the owner signs a policy on the wallet page with the browser wallet; the page says owner-signed and the signer enforces it', async () => {
    const owner = await newOwner(world, ['signed']);
    const wallet = owner.wallets[0]!;
    const { context, page } = await newDashboardPage(world.browser);
    try {
      await signFirstPolicyOnWalletPage(page, owner.key, wallet.id, '{"per_tx_cap_usd": "0.5"}');
      assert.equal(await page.getByRole('button', { name: 'Save without signing' }).count(), 0);
      // The wallet was shown the policy spelled out (the policy_text form), not a hash to sign blind.
      const asked = typedDataRequests(page);
      assert.equal(asked.length, 1);
      const typed = asked[0]!.typedData as {
        domain: unknown;
        types: { WalletPolicy: unknown };
        message: Record<string, string>;
      };
      assert.deepEqual(typed.domain, { name: 'Treasury wallet policy', version: '2' });
      assert.deepEqual(typed.types.WalletPolicy, [
        { name: 'wallet', type: 'string' },
        { name: 'policy', type: 'string' },
        { name: 'version', type: 'uint64' },
        { name: 'issuedAt', type: 'uint64' },
      ]);
      const shown = canonicalJson(normalizePolicy(walletPolicySchema.parse({ per_tx_cap_usd: '0.5' })));
      assert.deepEqual([typed.message.policy, typed.message.version], [shown, '1']);
      assert.equal(typed.message.policyHash, undefined);
      // The version and hash of the document just signed, with the command that checks them from any machine.
      const hash = policyDocumentHash(walletPolicySchema.parse({ per_tx_cap_usd: '0.5' }));
      assert.equal(
        await page.getByTestId('policy-verify-command').innerText(),
        `xx wallet policy verify ${wallet.id} --expect-version 1 --expect-hash ${hash}`,
      );
      assert.match(
        await page.getByTestId('policy-verify-hint').innerText(),
        /Check it from any machine: xx wallet policy verify/,
      );
      await screenshot(page, 'wallet-owner-signed');
      // The signed policy does not allow the key's destruction: revoking shows the API's refusal and how to allow it.
      const retire = page.locator('section[aria-labelledby="retire-title"]');
      await retire.getByRole('button', { name: 'Revoke wallet' }).click();
      await retire.getByRole('alert').getByText('key_destruction_not_allowed', { exact: true }).waitFor();
      assert.match(await retire.getByRole('alert').innerText(), /does not allow its key to be destroyed/);
      assert.match(await retire.getByTestId('key-destruction-hint').innerText(), /"allow_key_destruction": true/);
    } finally {
      await context.close();
    }
    // The signer holds the document the page signed: a compromised API loosening its own copy changes nothing.
    const held = await world.t.request('GET', `/v1/wallets/${wallet.id}/policy`, { token: owner.agentPat.pat });
    assert.deepEqual(
      [
        held.body.owner_policy.state,
        held.body.owner_policy.version,
        held.body.owner_policy.authority.address.toLowerCase(),
      ],
      ['owner_signed', 1, owner.key.address.toLowerCase()],
    );
    await world.t.db.knex('wallets').where({ id: wallet.id }).update({ policy: {} });
    const refused = await pay(owner.agentPat.pat, wallet.id, '750000');
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.deepEqual([refused.body.error_code, refused.body.decided_by], ['policy_denied', 'signer']);
  });

  /** The account's "dashboard" PATs (what the pages mint for an owner) that are still live. */
  const liveDashboardPats = async (session: string) => {
    const res = await world.t.request('GET', '/v1/pats?limit=100', { token: session });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const pats = res.body.pats as Array<{
      id: string;
      label: string | null;
      revoked_at: string | null;
      expires_at: string;
    }>;
    return pats
      .filter((p) => p.label === 'dashboard' && p.revoked_at === null && Date.parse(p.expires_at) > Date.now())
      .map((p) => p.id);
  };

  it('the overview’s wallet rows share one Treasury PAT, and none is left live after Sign out', async () => {
    const owner = await newOwner(world, ['one', 'two', 'three']);
    const { context, page } = await newDashboardPage(world.browser);
    try {
      await installFakeWallet(page, owner.key);
      await page.goto('/dashboard/');
      await page.getByRole('button', { name: 'Sign in with a browser wallet' }).click();
      // Every row has read its figures with the PAT (a row that could not shows an alert instead).
      const rows = page.getByTestId('wallet-row');
      await rows.nth(2).waitFor();
      await rows.getByRole('status').first().waitFor({ state: 'detached' });
      assert.equal(await rows.count(), 3);
      assert.equal(await rows.getByRole('alert').count(), 0);
      assert.equal((await liveDashboardPats(owner.session)).length, 1, 'one PAT for the account, not one per row');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('Not signed in').waitFor();
      assert.deepEqual(await liveDashboardPats(owner.session), []);
    } finally {
      await context.close();
    }
  });

  it('a tab closed while signed in leaves its Treasury PAT only as long as its session: ending the session ends it', async () => {
    const owner = await newOwner(world, ['closed']);
    const { context, page } = await newDashboardPage(world.browser);
    try {
      await installFakeWallet(page, owner.key);
      await page.goto('/dashboard/');
      await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/v1/identity/init') && r.ok()),
        page.getByRole('button', { name: 'Sign in with a browser wallet' }).click(),
      ]);
      const row = page.getByTestId('wallet-row');
      await row.first().waitFor();
      await row.getByRole('status').first().waitFor({ state: 'detached' });
      assert.equal((await liveDashboardPats(owner.session)).length, 1);
    } finally {
      await context.close(); // no Sign out: nothing of the page runs again
    }
    // The owner ends every session of the account elsewhere (the CLI, another browser).
    const ended = await world.t.request('POST', '/v1/auth/sessions/revoke-all', { token: owner.session });
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    const again = await ownerSession(world.t, owner.key);
    assert.deepEqual(await liveDashboardPats(again.session), [], 'the closed tab’s PAT ended with its session');
  });

  it('a wallet sign-in after a CLI handoff logs the exchanged session out', async () => {
    const owner = await newOwner(world, ['handed']);
    const { context, page } = await newDashboardPage(world.browser);
    try {
      await installFakeWallet(page, owner.key);
      const handoff = await handoffPat(world.t, owner);
      const state = await askForHandoff(context);
      const [exchanged] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/v1/identity/exchange-pat') && r.ok()),
        page.goto(handoffLink(handoff.pat, state, '/settings/pats')),
      ]);
      const agentSession: string = (await exchanged.json()).session;
      await page.getByRole('heading', { name: 'Sign in as the owner' }).waitFor();
      assert.equal((await world.t.request('GET', '/v1/auth/whoami', { token: agentSession })).status, 200);
      await page.getByRole('button', { name: 'Sign in with a browser wallet' }).click();
      await page.getByTestId('signed-in-as').getByText('Owner').waitFor();
      assert.equal((await world.t.request('GET', '/v1/auth/whoami', { token: agentSession })).status, 401);
    } finally {
      await context.close();
    }
  });

  describe('with the demo seller', () => {
    let demo: DemoSeller;
    let demoPat: string;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-demo-seller-'));
    before(async () => {
      demo = await startDemoSeller({
        apiUrl: world.t.baseUrl,
        publicUrl: PUBLIC_ORIGIN,
        facilitatorUrl: world.chain.facilitatorUrl,
        chainId: world.chain.chainId,
        network: world.chain.network,
        payToKey: anvilDevAccount(2).privateKey,
        dataDir,
      });
      demoPat = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-seller.json'), 'utf8')).pat;
    });
    after(async () => {
      await demo?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('a paid call to the demo seller appears on the Sellers ledger page; the chart draws and the CSV holds the row', async () => {
      const owner = await newOwner(world, ['buyer'], { fundUsd: '1' });
      const buyer = createX402Buyer({
        client: new TreasuryClient({ apiUrl: world.t.baseUrl, token: owner.agentPat.pat }),
        walletId: owner.wallets[0]!.id,
        maxPriceUsd: '0.05',
      });
      const paid = await buyer.request(`${demo.url}/joke`);
      assert.equal(paid.status, 200, paid.body);
      const tx = paid.receipt!.transaction;
      let reported = false;
      for (let i = 0; i < 100 && !reported; i++) {
        const rows = await world.t.request('GET', '/v1/ledger', { token: demoPat });
        reported = rows.body.entries?.some((e: { tx_hash: string }) => e.tx_hash === tx);
        if (!reported) await sleep(100);
      }
      assert.ok(reported, 'the middleware reported the payment to the ledger');

      const { context, page } = await newDashboardPage(world.browser);
      try {
        await page.goto('/dashboard/sellers');
        await page.getByLabel('Service PAT', { exact: true }).fill(demoPat);
        await page.getByRole('button', { name: 'Open' }).click();
        await page.waitForURL(`${PUBLIC_ORIGIN}/dashboard/sellers/${demo.sellerId}`);
        const row = page.getByTestId('ledger-row').filter({ hasText: tx });
        await row.waitFor();
        assert.match(await row.innerText(), /\$0\.01/);
        assert.match(await row.innerText(), /\/joke/);
        await page.locator('.chart canvas').first().waitFor();
        await page.getByTestId('verification-token').waitFor();
        await screenshot(page, 'seller-demo-ledger');
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: 'Export CSV' }).click(),
        ]);
        const csv = fs.readFileSync((await download.path())!, 'utf8');
        assert.ok(csv.includes(tx), csv);
        // The service PAT is in no storage and no URL.
        assert.ok(!page.url().includes(demoPat));
        assert.ok(
          !(
            await page.evaluate<string>('JSON.stringify({ ...localStorage, ...sessionStorage }) + document.cookie')
          ).includes('xx_pat_'),
        );
      } finally {
        await context.close();
      }
    });
  });
});
