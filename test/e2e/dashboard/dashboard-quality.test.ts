/**
 * What a person notices, in real Chromium at 1280 and 390 px: axe-core finds no serious or critical
 * violation on any page (signed out, and signed in as the owner), no page scrolls sideways, and each page is
 * saved as a screenshot (.build/screenshots/dashboard/, git-ignored). Also the last two flows: creating a
 * wallet (the `create_wallet` recovery's page) lands on the new wallet, and the api-key claim mints a
 * Treasury PAT that works, while an API refusal shows its user_message and request_id.
 */
import assert from 'node:assert/strict';
import {
  installFakeWallet,
  newDashboardPage,
  overflowsSideways,
  PUBLIC_ORIGIN,
  screenshot,
  seriousAxeViolations,
  spaGo,
  WIDTHS,
  type AxeViolation,
} from '../../support/dashboard-browser.js';
import { newOwner, useDashboardWorld, type Owner } from './dashboard-world.js';

type DashboardPage = Awaited<ReturnType<typeof newDashboardPage>>['page'];

describe('dashboard quality: axe-core, both widths, screenshots; create wallet and claim (Chromium)', function () {
  this.timeout(240_000);
  const world = useDashboardWorld();
  let owner: Owner;
  let sellerId: string;

  before(async () => {
    owner = await newOwner(world, ['ops'], { fundUsd: '3', dailyCapUsd: '5' });
    const seller = await world.t.request('POST', '/v1/sellers', {
      token: owner.session,
      body: { name: 'Forecasts', slug: 'forecasts' },
    });
    assert.equal(seller.status, 201, JSON.stringify(seller.body));
    sellerId = seller.body.seller_id;
    await world.t.request('POST', `/v1/sellers/${sellerId}/endpoints`, {
      token: seller.body.pat,
      body: { path: '/forecast', price: '0.02' },
    });
  });

  for (const width of Object.keys(WIDTHS) as Array<keyof typeof WIDTHS>) {
    it(`every page at ${WIDTHS[width].width} px: no serious axe-core violation, no sideways scroll`, async () => {
      const { context, page } = await newDashboardPage(world.browser, width);
      const found: Record<string, AxeViolation[]> = {};
      const sideways: string[] = [];
      const check = async (name: string, ready: () => Promise<unknown>) => {
        await ready();
        const v = await seriousAxeViolations(page);
        if (v.length) found[name] = v;
        if (await overflowsSideways(page)) sideways.push(name);
        await screenshot(page, name);
      };
      try {
        await installFakeWallet(page, owner.key);
        await page.goto('/dashboard/');
        await check('signed-out', () => page.getByRole('button', { name: 'Sign in with a browser wallet' }).waitFor());
        await page.getByRole('button', { name: 'Sign in with a browser wallet' }).click();
        await check('overview', () => page.getByText('$3').first().waitFor());
        await spaGo(page, `/dashboard/wallets/${owner.wallets[0]!.id}`);
        await check('wallet', async () => {
          await page.getByTestId('balance').waitFor();
          await page.getByLabel('Recipient address').fill('0x209693Bc6afc0C5328bA36FaF03C514EF312287C');
          await page.getByLabel('Amount (USD)').fill('6');
          await page
            .getByText('Would be refused.')
            .waitFor()
            .catch(() => page.getByText('Would pass.').waitFor());
        });
        await spaGo(page, '/dashboard/wallets/new');
        await check('create-wallet', () => page.getByRole('button', { name: 'Create wallet' }).waitFor());
        await spaGo(page, `/dashboard/settings/pats/${owner.agentPat.id}`);
        await check('tokens', () => page.getByLabel('Daily cap (USD)').waitFor());
        await spaGo(page, '/dashboard/sellers');
        await check('sellers-list', () => page.getByRole('link', { name: 'Forecasts' }).waitFor());
        await spaGo(page, `/dashboard/sellers/${sellerId}`);
        await check('seller', () => page.getByTestId('verification-token').waitFor());
        await spaGo(page, '/dashboard/claim');
        await check('claim', () => page.getByRole('button', { name: 'Mint a Treasury PAT' }).waitFor());
        await spaGo(page, '/dashboard/no-such-page');
        await check('not-found', () => page.getByRole('heading', { name: 'No such page' }).waitFor());
        // The check can fail: an unlabelled field added to the page is reported.
        await page.evaluate("document.querySelector('main').append(document.createElement('input'))");
        assert.ok(
          (await seriousAxeViolations(page)).some((v) => v.id === 'label'),
          'axe-core reports an unlabelled input',
        );
      } finally {
        await context.close();
      }
      assert.deepEqual(found, {}, JSON.stringify(found, null, 2));
      assert.deepEqual(sideways, [], `pages wider than ${WIDTHS[width].width} px`);
    });
  }

  /** Runs `steps` on a new page at `path`, signed in there with the owner's browser wallet; closes it after. */
  const signedInAt = async (path: string, steps: (page: DashboardPage) => Promise<void>) => {
    const { context, page } = await newDashboardPage(world.browser);
    try {
      await installFakeWallet(page, owner.key);
      await page.goto(path);
      await page.getByRole('button', { name: 'Sign in with a browser wallet' }).click();
      await steps(page);
    } finally {
      await context.close();
    }
  };

  it('creates a wallet from the create_wallet page and lands on it', async () => {
    await signedInAt('/dashboard/wallets/new', async (page) => {
      await page.getByLabel('Label (optional)').fill('fresh');
      await page.getByLabel('Policy (JSON, optional)').fill('{"per_tx_cap_usd": "0"}');
      assert.equal(await page.getByRole('button', { name: 'Create wallet' }).isDisabled(), true);
      await page.getByLabel('Policy (JSON, optional)').fill('{"per_tx_cap_usd": "2"}');
      await page.getByRole('button', { name: 'Create wallet' }).click();
      await page.waitForURL(/\/dashboard\/wallets\/wal_[0-9a-f]{24}$/);
      const id = page.url().split('/').pop()!;
      await page.getByRole('heading', { name: /fresh/ }).waitFor();
      const read = await world.t.request('GET', `/v1/wallets/${id}`, { token: owner.agentPat.pat });
      assert.equal(read.status, 200);
      assert.deepEqual([read.body.label, read.body.policy], ['fresh', { per_tx_cap_usd: '2' }]);
    });
  });

  it('the api-key claim mints a working Treasury PAT; a refusal shows user_message and request_id', async () => {
    await signedInAt('/dashboard/claim', async (page) => {
      await page.getByRole('button', { name: 'Mint a Treasury PAT' }).click();
      const pat = await page.getByTestId('claimed-pat').innerText();
      assert.match(pat, /^xx_pat_/);
      const listed = await world.t.request('GET', '/v1/wallets', { token: pat });
      assert.equal(listed.status, 200, 'the claimed PAT works on the Treasury routes');
      // This account was made by a sign-in and never had an api key: the API says so, with its request id.
      await page.getByRole('button', { name: 'Revoke the lost api key' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.innerText(), /no legacy api key/);
      assert.match(await alert.innerText(), /api_key_not_found/);
      assert.match(await page.getByTestId('request-id').innerText(), /\S{8,}/);
      await screenshot(page, 'claim-refused');
      assert.equal(page.url(), `${PUBLIC_ORIGIN}/dashboard/claim`);
    });
  });
});
