/**
 * The gate's platform routes (docs/gate.md) through HTTP: minting a gate PAT (alone, or beside a Treasury scope),
 * the catalogue (the account's `mpp` sellers only, with origin, oldest proven pay-to, status and endpoints), and
 * gate ledger rows (only for an `mpp` seller's endpoint of the same account; endpoint_id required).
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { useTestTreasury } from '../../support/api-harness.js';
import { provePayTo, proveSolanaPayTo, solanaPayToKey } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe('gate routes: scope, catalogue and ledger', function () {
  this.timeout(120_000);
  const t = useTestTreasury();
  let counter = 1;
  const row = (endpoint_id?: string) => ({
    tx_hash: `0x${(counter++).toString(16).padStart(64, '0')}`,
    payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
    amount: '10000',
    network: 'eip155:84532',
    method: 'GET',
    route: '/forecast',
    content_hash: 'ab'.repeat(32),
    ...(endpoint_id ? { endpoint_id } : {}),
  });

  async function tenant() {
    const me = await signInWithNewKey(t);
    const seller = async (name: string, protocol: 'x402' | 'mpp', origin?: string) =>
      (
        await t.request('POST', '/v1/sellers', {
          token: me.session,
          body: { name, protocol, ...(origin ? { origin } : {}) },
        })
      ).body as { seller_id: string; slug: string };
    const endpoint = async (sellerId: string, path: string, price = '0.01') =>
      (await t.request('POST', `/v1/sellers/${sellerId}/endpoints`, { token: me.session, body: { path, price } })).body
        .endpoint_id as string;
    return { me, seller, endpoint };
  }

  it('mints gate PATs: gate-only, or a Treasury PAT with gate: true; gate: true goes with no other scope', async () => {
    const { me } = await tenant();
    const gateOnly = await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'gate' } });
    assert.equal(gateOnly.status, 201, JSON.stringify(gateOnly.body));
    assert.equal(gateOnly.body.scope_type, 'gate');
    assert.equal(gateOnly.body.scope_id, me.account_id);
    assert.equal(gateOnly.body.gate, true);
    const both = await t.request('POST', '/v1/pats', {
      token: me.session,
      body: { scope_type: 'treasury', gate: true },
    });
    assert.equal(both.status, 201);
    assert.equal(both.body.scope_type, 'treasury');
    assert.equal(both.body.gate, true);
    const who = await t.request('GET', '/v1/auth/whoami', { token: both.body.pat });
    assert.equal(who.body.scope_type, 'treasury');
    assert.equal(who.body.gate, true);
    const agent = await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'agent', gate: true } });
    assert.equal(agent.status, 400);
    const plain = await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'treasury' } });
    assert.equal(plain.body.gate, false);
    assert.equal((await t.request('GET', '/v1/gate/catalogue', { token: plain.body.pat })).status, 403);
  });

  it("the catalogue lists the account's mpp sellers only, with origin, first proven pay-to, status and endpoints", async () => {
    const { me, seller, endpoint } = await tenant();
    const weather = await seller('Weather', 'mpp', 'http://127.0.0.1:9/');
    const forecast = await endpoint(weather.seller_id, '/forecast', '0.02');
    const first = privateKeyToAccount(generatePrivateKey());
    // A Solana pay-to proven before any EVM one: pay_to stays the first EVM address, solana_pay_to names it.
    const solana = solanaPayToKey();
    await proveSolanaPayTo(t, me.session, weather.seller_id, solana);
    await provePayTo(t, me.session, weather.seller_id, first);
    await provePayTo(t, me.session, weather.seller_id, privateKeyToAccount(generatePrivateKey()));
    const idle = await seller('Idle', 'mpp');
    await t.request('POST', `/v1/sellers/${idle.seller_id}/suspend`, { token: me.session });
    await seller('Middleware seller', 'x402');
    const other = await tenant();
    await other.seller('Elsewhere', 'mpp', 'http://127.0.0.1:9');

    const pat = (await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'gate' } })).body.pat;
    const res = await t.request('GET', '/v1/gate/catalogue', { token: pat });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.body.account_id, me.account_id);
    assert.deepEqual(
      res.body.sellers.map((s: { slug: string }) => s.slug),
      [weather.slug, idle.slug],
    );
    const [w, i] = res.body.sellers;
    assert.equal(w.origin, 'http://127.0.0.1:9');
    assert.equal(w.pay_to, first.address);
    assert.equal(w.solana_pay_to, solana.address);
    assert.equal(w.status, 'active');
    assert.deepEqual(w.endpoints, [
      {
        endpoint_id: forecast,
        slug: w.endpoints[0].slug,
        method: 'GET',
        path: '/forecast',
        path_pattern: null,
        price: '0.02',
        route_prices: {},
        priced: true,
        capabilities: [],
        discovery: null,
      },
    ]);
    assert.equal(w.name, 'Weather');
    assert.equal(w.origin_verified, false, 'an origin is sold only once verified');
    assert.equal(i.status, 'suspended');
    assert.equal(i.pay_to, null);
    assert.equal(i.solana_pay_to, null);
    assert.equal(i.origin, null);
  });

  it("gate ledger rows land on the endpoint's mpp seller; x402 sellers, other accounts and rows without endpoint_id are refused", async () => {
    const { me, seller, endpoint } = await tenant();
    const mpp = await seller('Gated', 'mpp', 'http://127.0.0.1:9');
    const gated = await endpoint(mpp.seller_id, '/forecast');
    const x402 = await seller('Middleware', 'x402');
    const direct = await endpoint(x402.seller_id, '/forecast');
    const other = await tenant();
    const foreign = await other.endpoint((await other.seller('Foreign', 'mpp')).seller_id, '/forecast');
    const pat = (await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'gate' } })).body.pat;

    const ok = await t.request('POST', '/v1/gate/ledger', { token: pat, body: row(gated) });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.endpoint_id, gated);
    assert.equal(ok.body.content_hash, 'ab'.repeat(32));
    assert.equal((await t.request('POST', '/v1/gate/ledger', { token: pat, body: row(direct) })).status, 404);
    assert.equal((await t.request('POST', '/v1/gate/ledger', { token: pat, body: row(foreign) })).status, 404);
    assert.equal((await t.request('POST', '/v1/gate/ledger', { token: pat, body: row() })).status, 400);
    const batch = await t.request('POST', '/v1/gate/ledger/batch', {
      token: pat,
      body: { rows: [row(gated), row(direct), row()] },
    });
    assert.equal(batch.status, 200);
    assert.deepEqual(
      batch.body.results.map((r: { outcome: string; error_code?: string }) => [r.outcome, r.error_code]),
      [
        ['created', undefined],
        ['rejected', 'endpoint_not_found'],
        ['rejected', 'invalid_request'],
      ],
    );
    const ledger = await t.request('GET', `/v1/ledger?seller_id=${mpp.seller_id}`, { token: me.session });
    assert.equal(ledger.body.entries.length, 2, JSON.stringify(ledger.body));
  });
});
