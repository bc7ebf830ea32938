/**
 * `POST /v1/gate/uptime` through HTTP and PostgreSQL: a gate PAT stores hourly counts for its own account's
 * managed-proxy endpoints only (another account's, or a middleware seller's, are refused per bucket), within the
 * last 48 hours; other PATs get 403; unbounded numbers and hours off the hour are 400. The public catalogue adds
 * the 30-day `uptime` (ratio and samples, as reported by the seller's gate) to a resource that has samples, and
 * nothing to one that has none.
 */
import assert from 'node:assert/strict';
import { discoveryResourcesPageSchema } from '../../../src/shared/api-responses/discovery-responses.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { registerSeller } from '../../support/discoverable-seller.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const HOUR = 3_600_000;
const hourAgo = (n: number) => new Date(Math.floor(Date.now() / HOUR) * HOUR - n * HOUR).toISOString();

describe('gate uptime reports: ownership, bounds, and the catalogue', function () {
  this.timeout(180_000);
  const t = useTestTreasury({ extraEnv: { TREASURY_DISCOVERY_CACHE_MS: '0' } });
  const servers = new LoopbackServers();
  after(() => servers.closeAll());

  async function tenant() {
    const me = await signInWithNewKey(t);
    const seller = async (name: string, protocol: 'x402' | 'mpp') =>
      (await t.request('POST', '/v1/sellers', { token: me.session, body: { name, protocol } })).body as {
        seller_id: string;
      };
    const endpoint = async (sellerId: string, path: string) =>
      (
        await t.request('POST', `/v1/sellers/${sellerId}/endpoints`, {
          token: me.session,
          body: { path, price: '0.01' },
        })
      ).body.endpoint_id as string;
    const gatePat = async () =>
      (await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'gate' } })).body.pat as string;
    return { me, seller, endpoint, gatePat };
  }

  it("stores counts for the gate's own mpp endpoints only, inside the window, and adds to the hour", async () => {
    const a = await tenant();
    const gated = await a.endpoint((await a.seller('Gated', 'mpp')).seller_id, '/forecast');
    const direct = await a.endpoint((await a.seller('Direct', 'x402')).seller_id, '/forecast');
    const b = await tenant();
    const foreign = await b.endpoint((await b.seller('Foreign', 'mpp')).seller_id, '/forecast');
    const pat = await a.gatePat();
    const bucket = (endpoint_id: string, hour = hourAgo(1)) => ({ endpoint_id, hour, answered: 9, failed: 1 });

    const res = await t.request('POST', '/v1/gate/uptime', {
      token: pat,
      body: { buckets: [bucket(gated), bucket(gated), bucket(direct), bucket(foreign), bucket(gated, hourAgo(72))] },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const outcomes = Object.fromEntries(
      (res.body.results as Array<{ endpoint_id: string; hour: string; outcome: string; error_code?: string }>).map(
        (r) => [`${r.endpoint_id} ${r.hour}`, r.error_code ?? r.outcome],
      ),
    );
    assert.deepEqual(outcomes, {
      [`${gated} ${hourAgo(1)}`]: 'stored',
      [`${direct} ${hourAgo(1)}`]: 'endpoint_not_found',
      [`${foreign} ${hourAgo(1)}`]: 'endpoint_not_found',
      [`${gated} ${hourAgo(72)}`]: 'uptime_hour_out_of_window',
    });
    const rows = await t.db.knex('endpoint_uptime_hours').whereIn('endpoint_id', [gated, direct, foreign]);
    assert.equal(rows.length, 1);
    assert.deepEqual([rows[0].endpoint_id, rows[0].answered, rows[0].failed], [gated, 18, 2]);
  });

  it('caps buckets of one hour that add up past the table bound, in one report and across reports', async () => {
    const a = await tenant();
    const gated = await a.endpoint((await a.seller('Busy', 'mpp')).seller_id, '/busy');
    const pat = await a.gatePat();
    const full = { endpoint_id: gated, hour: hourAgo(1), answered: 1_000_000, failed: 1_000_000 };
    for (let report = 0; report < 2; report++) {
      const res = await t.request('POST', '/v1/gate/uptime', { token: pat, body: { buckets: Array(11).fill(full) } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(
        res.body.results.map((r: { outcome: string }) => r.outcome),
        ['stored'],
      );
      const rows = await t.db.knex('endpoint_uptime_hours').where({ endpoint_id: gated });
      assert.deepEqual(
        rows.map((r) => [r.answered, r.failed]),
        [[10_000_000, 10_000_000]],
        'the table bound, not 11,000,000',
      );
    }
  });

  it('refuses other PATs (403) and unbounded or malformed buckets (400)', async () => {
    const a = await tenant();
    const gated = await a.endpoint((await a.seller('Gated', 'mpp')).seller_id, '/forecast');
    const treasuryPat = (await t.request('POST', '/v1/pats', { token: a.me.session, body: { scope_type: 'treasury' } }))
      .body.pat;
    const ok = { endpoint_id: gated, hour: hourAgo(0), answered: 1, failed: 0 };
    assert.equal(
      (await t.request('POST', '/v1/gate/uptime', { token: treasuryPat, body: { buckets: [ok] } })).status,
      403,
    );
    const pat = await a.gatePat();
    for (const bad of [
      { ...ok, answered: 1_000_001 },
      { ...ok, failed: -1 },
      { ...ok, answered: 0.5 },
      { ...ok, answered: 0, failed: 0 },
      { ...ok, hour: '2026-11-29T13:30:00Z' },
      { ...ok, endpoint_id: 'ep_../../x' },
      { ...ok, extra: true },
    ]) {
      const res = await t.request('POST', '/v1/gate/uptime', { token: pat, body: { buckets: [bad] } });
      assert.equal(res.status, 400, `${JSON.stringify(bad)} → ${res.status}`);
    }
    const tooMany = Array.from({ length: 501 }, () => ok);
    assert.equal((await t.request('POST', '/v1/gate/uptime', { token: pat, body: { buckets: tooMany } })).status, 400);
  });

  it('the catalogue shows the 30-day uptime of a resource with samples, and none without', async () => {
    const session = (await signInWithNewKey(t)).session;
    const seller = await registerSeller(t, servers, session, 'Uptime Weather', {
      endpoints: { 'GET /up': '0.01', 'GET /quiet': '0.01' },
    });
    const up = seller.endpoints['GET /up']!;
    // A middleware seller has no gate to report through: its counts are written here as a gate's would be stored.
    await t.db.knex('endpoint_uptime_hours').insert([
      { endpoint_id: up, hour: hourAgo(2), answered: 95, failed: 5 },
      { endpoint_id: up, hour: hourAgo(24 * 40), answered: 0, failed: 1000 },
    ]);
    const res = await t.request('GET', '/discovery/resources?limit=100');
    assert.equal(res.status, 200);
    const page = discoveryResourcesPageSchema.parse(res.body);
    const mine = page.items.filter((i) => i.treasury.seller_id === seller.seller_id);
    const byPath = new Map(mine.map((i) => [new URL(i.resource).pathname, i.treasury]));
    assert.deepEqual(byPath.get('/up')!.uptime, {
      ratio: 0.95,
      samples: 100,
      window_days: 30,
      reported_by: 'seller_gate',
    });
    assert.equal(byPath.get('/quiet')!.uptime, undefined, 'no sample, no uptime');
  });
});
