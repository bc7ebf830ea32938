/**
 * The Sellers page after `xx dashboard`, in real Chromium against a real Treasury. Defends: a session handed over
 * by the CLI (exchanged from a single-use agent PAT) acts as the agent, which may not read the account's sellers
 * (the API answers 403 `fresh_sign_in_required`); the page says plainly that the owner's sign-in is needed, offers
 * it and the service-PAT form, and never sends that session to a seller route nor shows the raw refusal. Once the
 * owner signs in with the browser wallet, the page lists the account's sellers.
 */
import assert from 'node:assert/strict';
import type { Response } from 'playwright-core';
import { installFakeWallet, newDashboardPage, screenshot } from '../../support/dashboard-browser.js';
import { askForHandoff, handoffLink, handoffPat, newOwner, useDashboardWorld } from './dashboard-world.js';

describe('dashboard: the Sellers page after a CLI handoff (Chromium)', function () {
  this.timeout(180_000);
  const world = useDashboardWorld();

  it('asks a handed-over session for the owner’s sign-in instead of showing a 403; the owner then sees the sellers', async () => {
    const owner = await newOwner(world, ['handed']);
    const seller = await world.t.request('POST', '/v1/sellers', {
      token: owner.session,
      body: { name: 'Handoff Weather' },
    });
    assert.equal(seller.status, 201, JSON.stringify(seller.body));
    const { context, page } = await newDashboardPage(world.browser);
    try {
      await installFakeWallet(page, owner.key);
      const sellerReads: Response[] = [];
      page.on('response', (r) => {
        if (/^\/v1\/(sellers|ledger)(\/|$)/.test(new URL(r.url()).pathname)) sellerReads.push(r);
      });
      const handoff = await handoffPat(world.t, owner);
      const state = await askForHandoff(context);
      await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/v1/identity/exchange-pat') && r.ok()),
        page.goto(handoffLink(handoff.pat, state, '/sellers')),
      ]);
      await page.getByTestId('signed-in-as').getByText('Agent (from the CLI)').waitFor();
      await page.getByRole('heading', { name: 'Sign in as the owner' }).waitFor();
      await page.getByText('Seller pages need the owner’s sign-in.', { exact: false }).waitFor();
      await page.getByLabel('Service PAT', { exact: true }).waitFor();
      await screenshot(page, 'sellers-handed-over');
      assert.equal(await page.getByText('fresh_sign_in_required').count(), 0, 'no raw refusal on the page');
      assert.equal(await page.getByRole('alert').count(), 0, 'no error box');
      assert.deepEqual(
        sellerReads.map((r) => `${r.status()} ${r.url()}`),
        [],
        'the handed-over session is sent to no seller route',
      );

      await page.getByRole('button', { name: 'Sign in with a browser wallet' }).click();
      await page.getByTestId('signed-in-as').getByText('Owner').waitFor();
      await page.getByRole('link', { name: 'Handoff Weather' }).waitFor();
      assert.ok(
        sellerReads.some((r) => r.status() === 200 && new URL(r.url()).pathname === '/v1/sellers'),
        'the owner’s sign-in reads the sellers',
      );
    } finally {
      await context.close();
    }
  });
});
