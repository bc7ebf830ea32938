/**
 * Seller endpoint path patterns through HTTP: patterns that could only be matched by backtracking (several
 * parameters in one segment, unbalanced braces, too many segments) are refused with 400 on create and on
 * update; the accepted forms attribute ledger reports by route; and a hostile pattern already stored (old
 * data, inserted directly) cannot freeze the API: a ledger report against it answers within a bound set by the
 * same report on a short route (a baseline measured in the test), while /livez keeps answering. That last
 * part runs the API in its own process, so a blocked event loop fails the test instead of blocking the runner.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startApiProcess, type ApiProcess } from '../../support/api-process.js';
import { baselineMs, boundFrom } from '../../support/relative-budget.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInBody, signInWithNewKey } from '../../support/sign-in.js';

const PAYER = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
const txHash = () => `0x${randomBytes(32).toString('hex')}`;
/** `/{a}{b}…{x}`: 24 parameters in one segment — a backtracking regex needs ~C(58,23) steps to refuse a 60-character route. */
const HOSTILE_PATTERN = '/' + Array.from({ length: 24 }, (_, i) => `{${String.fromCharCode(97 + i)}}`).join('');
/** 60 characters, one long segment then a slash: no pattern above can match it, so a regex tries every split. */
const HOSTILE_ROUTE = '/' + 'a'.repeat(58) + '/';

describe('seller path patterns (HTTP, PostgreSQL)', function () {
  this.timeout(120_000);

  describe('validated on write, matched segment by segment', () => {
    let t: TestTreasury;
    let session: string;
    before(async () => {
      t = await startTestTreasury();
      session = (await signInWithNewKey(t)).session;
    });
    after(async () => {
      await t?.stop();
    });

    it('refuses patterns with several parameters in a segment, bad braces, too many segments or parameters (create and update)', async () => {
      const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Pattern Co' } })).body;
      const refused = [
        HOSTILE_PATTERN,
        '/items/{a}{b}',
        '/items/{a}-{b}',
        '/items/{id',
        '/items/id}',
        '/items/{}',
        '/items/{i{d}}',
        '/items/{id}/{id}',
        '/' + Array.from({ length: 40 }, (_, i) => `s${i}`).join('/'),
        '/' + Array.from({ length: 20 }, (_, i) => `{p${i}}`).join('/'),
        '/items/{' + 'n'.repeat(65) + '}',
      ];
      for (const [i, pattern] of refused.entries()) {
        const created = await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
          token: seller.pat,
          body: { path: `/refused-${i}`, price: '0.01', path_pattern: pattern },
        });
        assert.equal(created.status, 400, `${pattern} → ${JSON.stringify(created.body)}`);
        assert.equal(created.body.error_code, 'invalid_request');
        assert.ok(
          created.body.issues.some((issue: { path: string }) => issue.path === 'path_pattern'),
          JSON.stringify(created.body),
        );
      }
      const ok = await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
        token: seller.pat,
        body: { path: '/items', price: '0.01', path_pattern: '/items/{id}' },
      });
      assert.equal(ok.status, 201, JSON.stringify(ok.body));
      const patched = await t.request('PATCH', `/v1/sellers/${seller.seller_id}/endpoints/${ok.body.endpoint_id}`, {
        token: seller.pat,
        body: { path_pattern: HOSTILE_PATTERN },
      });
      assert.equal(patched.status, 400, JSON.stringify(patched.body));
      const stored = await t.db.knex('endpoints').where({ id: ok.body.endpoint_id }).first('path_pattern');
      assert.equal(stored.path_pattern, '/items/{id}');
    });

    it('attributes reports by whole-segment and prefix/suffix parameters, and only to routes of the same shape', async () => {
      const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Routes Co' } })).body;
      // The endpoint's path is the pattern itself, as OpenAPI ingest stores it.
      const make = async (pattern: string) => {
        const res = await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
          token: seller.pat,
          body: { path: pattern, price: '0.01', path_pattern: pattern },
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body.endpoint_id as string;
      };
      const item = await make('/items/{id}');
      const file = await make('/files/{name}.json');
      const versioned = await make('/v{major}/reports/{report_id}/pages');
      const attributed = async (route: string) =>
        (
          await t.request('POST', '/v1/ledger', {
            token: seller.pat,
            body: { tx_hash: txHash(), payer: PAYER, amount: '10000', network: 'eip155:84532', route },
          })
        ).body.endpoint_id;
      assert.equal(await attributed('/items/42'), item);
      assert.equal(await attributed('/files/report.json'), file);
      assert.equal(await attributed('/v2/reports/r-7/pages'), versioned);
      for (const route of [
        '/items/42/more',
        '/items/',
        '/items',
        '/files/.json',
        '/files/report.csv',
        '/v/reports/r/pages',
        '/v2/reports//pages',
        '/items/a/../b',
      ]) {
        assert.equal(await attributed(route), null, route);
      }
    });
  });

  describe('a hostile pattern stored before validation existed', () => {
    let t: TestTreasury;
    let api: ApiProcess;
    before(async () => {
      // The in-process app only provides the database and the signer; the API under test is its own process.
      t = await startTestTreasury();
      api = await startApiProcess(t.db, t.signer);
    });
    after(async () => {
      await api?.stop();
      await t?.stop();
    });

    it('a ledger report against it answers within a bound set by a baseline, and /livez keeps answering', async () => {
      const post = async (route: string, body: unknown, token?: string) => {
        const res = await fetch(api.url + route, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      const session = (
        await post('/v1/identity/init', await signInBody({ request: (_method, route) => post(route, {}) }, api.url))
      ).body.session;
      const seller = (await post('/v1/sellers', { name: 'Old Data Co' }, session)).body;
      assert.ok(seller.pat, JSON.stringify(seller));
      const now = new Date();
      await t.db.knex('endpoints').insert({
        id: `ep_${randomBytes(12).toString('hex')}`,
        seller_id: seller.seller_id,
        slug: 'hostile',
        method: 'GET',
        path: '/hostile',
        path_pattern: HOSTILE_PATTERN,
        price_micro: '10000',
        created_at: now,
        updated_at: now,
      });

      const reportOn = (route: string) =>
        fetch(`${api.url}/v1/ledger`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${seller.pat}` },
          body: JSON.stringify({ tx_hash: txHash(), payer: PAYER, amount: '10000', network: 'eip155:84532', route }),
          signal: AbortSignal.timeout(30_000),
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
      // The same report on a short route, which the hostile pattern refuses at once even by backtracking: the
      // baseline, measured on this machine under its present load (test/support/relative-budget.ts).
      const baseline = await baselineMs(() => reportOn('/x'));
      const started = performance.now();
      const report = reportOn(HOSTILE_ROUTE);
      const live = fetch(`${api.url}/livez`, { signal: AbortSignal.timeout(30_000) }).then((res) => res.status);
      const [reported, liveStatus] = await Promise.all([report, live]);
      const took = performance.now() - started;
      assert.equal(liveStatus, 200);
      assert.equal(reported.status, 201, JSON.stringify(reported.body));
      assert.equal(reported.body.endpoint_id, null, 'a stored pattern that is no longer valid matches nothing');
      // A backtracking match of this route takes ~C(58,23) steps (years); a match segment by segment takes what
      // the baseline takes. The bound scales with the load, so it holds on a busy runner.
      const bound = boundFrom(baseline);
      assert.ok(took < bound, `${Math.round(took)} ms against a ${Math.round(baseline)} ms baseline`);
      assert.equal(await fetch(`${api.url}/livez`, { signal: AbortSignal.timeout(30_000) }).then((r) => r.status), 200);
    });
  });
});
