/**
 * The seller page shows how the seller's endpoints appear in the public catalogue, in real Chromium against a
 * real Treasury: a listed endpoint with its price, verified revenue and the uptime its gate reported (labelled
 * as reported), and a managed-proxy seller's endpoint as not listed, with the reason.
 */
import assert from 'node:assert/strict';
import { registerSeller } from '../../support/discoverable-seller.js';
import { newDashboardPage, PUBLIC_ORIGIN, screenshot } from '../../support/dashboard-browser.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { useDashboardWorld } from './dashboard-world.js';

describe('dashboard: the seller page shows discovery (Chromium)', function () {
  this.timeout(180_000);
  const world = useDashboardWorld();
  const servers = new LoopbackServers();
  after(() => servers.closeAll());

  async function openSeller(pat: string, sellerId: string) {
    const { context, page } = await newDashboardPage(world.browser);
    await page.goto('/dashboard/sellers');
    await page.getByLabel('Service PAT', { exact: true }).fill(pat);
    await page.getByRole('button', { name: 'Open' }).click();
    await page.waitForURL(`${PUBLIC_ORIGIN}/dashboard/sellers/${sellerId}`);
    const row = page.getByTestId('discovery-row').first();
    await row.waitFor();
    return { context, page, row };
  }

  it('a listed endpoint with price, revenue and reported uptime; a gated one not listed, with why', async () => {
    const session = (await signInWithNewKey(world.t)).session;
    const listed = await registerSeller(world.t, servers, session, 'Catalogued Weather', {
      endpoints: { 'GET /forecast': '0.25' },
    });
    const gated = await registerSeller(world.t, servers, session, 'Gated Weather', {
      endpoints: { 'GET /forecast': '0.01' },
      protocol: 'mpp',
    });
    await world.t.db.knex('endpoint_uptime_hours').insert({
      endpoint_id: listed.endpoints['GET /forecast'],
      hour: new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString(),
      answered: 3,
      failed: 1,
    });

    const first = await openSeller(listed.pat, listed.seller_id);
    try {
      const text = await first.row.innerText();
      assert.match(text, /GET \/forecast/);
      assert.match(text, /listed/);
      assert.doesNotMatch(text, /not listed/);
      assert.match(text, /\$0\.25/);
      assert.match(text, /\$0 · 0 calls/);
      assert.match(text, /75\.00% of 4 \(as reported by its gate\)/);
      await screenshot(first.page, 'seller-discovery');
    } finally {
      await first.context.close();
    }

    const second = await openSeller(gated.pat, gated.seller_id);
    try {
      const text = await second.row.innerText();
      assert.match(text, /not listed/);
      assert.match(text, /sold through the account's gate, whose public address is not verified/);
      assert.match(text, /—/, 'no uptime reported');
    } finally {
      await second.context.close();
    }
  });
});
