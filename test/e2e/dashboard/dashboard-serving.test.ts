/**
 * The dashboard served by the API and signed in from the CLI, in real Chromium:
 * - /dashboard/ and its deep links answer the single page with a strict CSP (no inline script, no framing),
 *   nosniff and no-referrer; hashed assets are cached as immutable; a path out of the asset folder is refused.
 * - The CSP is enforced: an inline script added to the page does not run.
 * - `xx dashboard`'s handoff (/dashboard/cli-handoff#pat=…&state=…, the code a tab of this browser asked
 *   with) lands signed in with the agent's wallets listed; the fragment is gone from location.href and from
 *   history; the PAT cannot be used again; sign-out ends the session on the server.
 * - A handoff link this browser did not ask for (no code, or another browser's) is refused and its PAT is
 *   never exchanged: a crafted link cannot sign a tab in as someone else's agent.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildDashboard } from '../../../ops/dashboard/build-dashboard.js';
import { DASHBOARD_CSP } from '../../../src/api/http/dashboard-static.js';
import { newDashboardPage, PUBLIC_ORIGIN, screenshot } from '../../support/dashboard-browser.js';
import { fetchEach } from '../../support/fetch-each.js';
import { askForHandoff, handoffLink, handoffPat, newOwner, useDashboardWorld } from './dashboard-world.js';

describe('dashboard: served by the API, CSP, CLI handoff (Chromium)', function () {
  this.timeout(180_000);
  const world = useDashboardWorld();

  it('serves the page and its deep links with the security headers; assets immutable; traversal refused', async () => {
    const { t } = world;
    for await (const [path, res] of fetchEach(t.baseUrl, [
      '/dashboard/',
      '/dashboard/settings/pats/pat_0123456789abcdef01234567',
      '/dashboard/wallets/new',
    ])) {
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      assert.equal(res.headers.get('content-security-policy'), DASHBOARD_CSP);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      const html = await res.text();
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script in the page');
      const asset = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      assert.ok(asset, html);
      const js = await fetch(t.baseUrl + asset);
      assert.equal(js.status, 200);
      assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
    }
    assert.match(DASHBOARD_CSP, /script-src 'self'(;|$)/);
    assert.match(DASHBOARD_CSP, /frame-ancestors 'none'/);
    const redirect = await fetch(`${t.baseUrl}/dashboard`, { redirect: 'manual' });
    assert.equal(redirect.status, 308);
    assert.equal(redirect.headers.get('location'), '/dashboard/');
    for await (const [path, res] of fetchEach(t.baseUrl, [
      '/dashboard/assets/..%2F..%2F..%2Fpackage.json',
      '/dashboard/assets/%2e%2e/%2e%2e/package.json',
      '/dashboard/assets/missing.js',
    ])) {
      assert.equal(res.status, 404, path);
      assert.equal(((await res.json()) as { error_code: string }).error_code, 'not_found');
    }
    const post = await fetch(`${t.baseUrl}/dashboard/`, { method: 'POST' });
    assert.ok(post.status === 404 || post.status === 405, String(post.status));
  });

  it('enforces the CSP in the browser: an inline script does not run', async () => {
    const { context, page } = await newDashboardPage(world.browser);
    try {
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.goto('/dashboard/');
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      // Strings, not functions: the test project compiles without the DOM library.
      const ran = await page.evaluate<{ ran: boolean; directive: string }>(`(async () => {
        const seen = new Promise((resolve) =>
          document.addEventListener('securitypolicyviolation', (e) => resolve(e.violatedDirective), { once: true }),
        );
        const s = document.createElement('script');
        s.textContent = 'window.__inlineRan = true';
        document.body.append(s);
        return { ran: window.__inlineRan === true, directive: await seen };
      })()`);
      assert.equal(ran.ran, false, 'the inline script ran');
      assert.match(ran.directive, /^script-src/);
    } finally {
      await context.close();
    }
  });

  it('the CLI handoff lands signed in with the agent’s wallets; the fragment is gone from the URL and history; sign-out ends the session', async () => {
    const { t } = world;
    const owner = await newOwner(world, ['ops', 'research'], { fundUsd: '2' });
    const handoff = await handoffPat(t, owner);
    const { context, page } = await newDashboardPage(world.browser);
    try {
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      await page.goto(handoffLink(handoff.pat, await askForHandoff(context)));
      await page.waitForURL(`${PUBLIC_ORIGIN}/dashboard/`);
      const rows = page.getByTestId('wallet-row');
      await rows.nth(1).waitFor();
      assert.equal(await rows.count(), 2);
      for (const w of owner.wallets) await page.getByText(w.address).waitFor();
      await page.getByText('$2', { exact: false }).first().waitFor();
      assert.match(await page.getByTestId('signed-in-as').innerText(), new RegExp(owner.agentId));
      const href = await page.evaluate<string>('location.href');
      assert.equal(href, `${PUBLIC_ORIGIN}/dashboard/`);
      assert.ok(!href.includes(handoff.pat) && !href.includes('#'), href);
      assert.ok(!requests.some((u) => u.includes(handoff.pat)), 'the PAT never travelled in a URL');
      await screenshot(page, 'overview-agent');
      // History holds no entry with the fragment: the handoff entry was replaced, then replaced by the landing page.
      assert.equal(await page.evaluate<number>('history.length'), 2, 'about:blank and the overview');
      // Single use: the PAT exchanged once cannot be exchanged again.
      assert.equal((await t.request('POST', '/v1/identity/exchange-pat', { token: handoff.pat })).status, 401);
      // No token in storage.
      const stored = await page.evaluate<string>(
        'JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie',
      );
      assert.ok(!/as_|xx_pat_/.test(stored), stored);
      const session = await t.db.knex('api_tokens').where({ parent_token_id: handoff.id, kind: 'session' }).first();
      assert.ok(session, 'an exchanged session exists');
      assert.equal(session.revoked_at, null);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('Not signed in').waitFor();
      const after = await t.db.knex('api_tokens').where({ id: session.id }).first();
      assert.notEqual(after.revoked_at, null, 'sign-out revoked the session on the server');
      await page.goBack();
      assert.ok(!page.url().includes(handoff.pat), page.url());
    } finally {
      await context.close();
    }
  });

  it('refuses a crafted link — no code, or another browser’s code — and leaves the PAT unused', async () => {
    const { t } = world;
    const attacker = await newOwner(world, ['bait']);
    const elsewhere = await newDashboardPage(world.browser);
    const victim = await newDashboardPage(world.browser);
    try {
      // First a link with no code, at a browser that asked for nothing; then one carrying the code another
      // browser (the attacker's) asked with, at a browser that asked with its own.
      for (const step of ['no code', 'another browser’s code'] as const) {
        const handoff = await handoffPat(t, attacker);
        let link = `/dashboard/cli-handoff#pat=${encodeURIComponent(handoff.pat)}`;
        if (step !== 'no code') {
          await askForHandoff(victim.context);
          link = handoffLink(handoff.pat, await askForHandoff(elsewhere.context));
        }
        const tab = await victim.context.newPage();
        await tab.goto(link);
        const outcome = tab.getByTestId('handoff-refused').or(tab.getByTestId('signed-in-as'));
        await outcome.first().waitFor();
        assert.equal(await tab.getByTestId('signed-in-as').count(), 0, `${step}: signed in as the attacker's agent`);
        assert.ok(!tab.url().includes(handoff.pat), tab.url());
        const row = await t.db.knex('api_tokens').where({ id: handoff.id }).first('used_at');
        assert.equal(row.used_at, null, `${step}: the PAT was never presented`);
        assert.equal(await t.db.knex('api_tokens').where({ parent_token_id: handoff.id }).first(), undefined);
        await tab.close();
      }
    } finally {
      await elsewhere.context.close();
      await victim.context.close();
    }
  });
});

describe('dashboard build', function () {
  this.timeout(180_000);

  it('leaves NODE_ENV as it found it (npm start builds in its own process, then starts the API in production mode otherwise)', async () => {
    const before = process.env.NODE_ENV;
    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-dashboard-build-'));
    try {
      await buildDashboard({ outDir });
      assert.ok(fs.existsSync(path.join(outDir, 'index.html')), 'the build wrote the page');
      assert.equal(process.env.NODE_ENV, before);
    } finally {
      fs.rmSync(outDir, { recursive: true, force: true });
      if (before === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = before;
    }
  });
});
