/**
 * `GET /v1/sellers/{id}/discovery` through HTTP and PostgreSQL: each endpoint of a seller as the public catalogue
 * sees it — listed exactly when `/discovery/resources` lists it, and otherwise the reasons (unverified origin,
 * sold through the gate, suspended, no payee) — with its price, verified revenue and calls and reported uptime;
 * another account's session or another seller's service PAT gets 404.
 */
import assert from 'node:assert/strict';
import { sellerDiscoverySchema } from '../../../src/shared/api-responses/seller-discovery-responses.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { registerSeller } from '../../support/discoverable-seller.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe("a seller's view of discovery: listed or why not", function () {
  this.timeout(180_000);
  const t = useTestTreasury({ extraEnv: { TREASURY_DISCOVERY_CACHE_MS: '0' } });
  const servers = new LoopbackServers();
  after(() => servers.closeAll());

  const view = async (sellerId: string, token: string) => {
    const res = await t.request('GET', `/v1/sellers/${sellerId}/discovery`, { token });
    return { status: res.status, body: res.status === 200 ? sellerDiscoverySchema.parse(res.body) : res.body };
  };

  it('agrees with the public catalogue and names the reasons of what it does not list', async () => {
    const session = (await signInWithNewKey(t)).session;
    const listed = await registerSeller(t, servers, session, 'Listed Weather', {
      endpoints: { 'GET /forecast': '0.25' },
    });
    const unverified = await registerSeller(t, servers, session, 'Unverified Weather', {
      endpoints: { 'GET /forecast': '0.01' },
      verify: false,
      prove: false,
    });
    const gated = await registerSeller(t, servers, session, 'Gated Weather', {
      endpoints: { 'GET /forecast': '0.01' },
      protocol: 'mpp',
    });
    const suspended = await registerSeller(t, servers, session, 'Suspended Weather', {
      endpoints: { 'GET /forecast': '0.01' },
    });
    await t.request('POST', `/v1/sellers/${suspended.seller_id}/suspend`, { token: session });
    await t.db.knex('endpoint_uptime_hours').insert({
      endpoint_id: listed.endpoints['GET /forecast'],
      hour: new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString(),
      answered: 3,
      failed: 1,
    });

    const mine = await view(listed.seller_id, session);
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.deepEqual(mine.body.endpoints, [
      {
        endpoint_id: listed.endpoints['GET /forecast'],
        method: 'GET',
        path: '/forecast',
        listed: true,
        reasons: [],
        price_usd: '0.25',
        revenue_30d_usd: '0',
        paid_calls_30d: 0,
        uptime: { ratio: 0.75, samples: 4, window_days: 30, reported_by: 'seller_gate' },
      },
    ]);
    const reasons = async (sellerId: string) => (await view(sellerId, session)).body.endpoints[0].reasons;
    assert.deepEqual(await reasons(unverified.seller_id), ['origin_not_verified', 'no_pay_to']);
    assert.deepEqual(await reasons(gated.seller_id), ['gate_address_not_verified']);
    assert.deepEqual(await reasons(suspended.seller_id), ['seller_not_active']);

    // Listed here exactly when the public catalogue lists it.
    const page = (await t.request('GET', '/discovery/resources?limit=100')).body as {
      items: Array<{ treasury: { seller_id: string } }>;
    };
    const public_ = new Set(page.items.map((i) => i.treasury.seller_id));
    for (const s of [listed, unverified, gated, suspended]) {
      const own = (await view(s.seller_id, session)).body.endpoints[0].listed;
      assert.equal(own, public_.has(s.seller_id), `${s.seller_id}: listed ${own}`);
    }

    // The seller's own service PAT reads it; another account and another seller's PAT do not.
    assert.equal((await view(listed.seller_id, listed.pat)).status, 200);
    assert.equal((await view(listed.seller_id, gated.pat)).status, 404);
    const stranger = (await signInWithNewKey(t)).session;
    assert.equal((await view(listed.seller_id, stranger)).status, 404);
  });
});
