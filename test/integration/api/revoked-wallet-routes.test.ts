/**
 * A revoked wallet answers 410 `wallet_revoked` on every route of it, walked from the app's own route table
 * (`TreasuryApp.routes`, read from the routers' registered layers): a route added under /v1/wallets/{id} later
 * is walked too, so it cannot forget the check. The same walk with another account's key answers 404
 * `wallet_not_found` everywhere (a revoked wallet of another account is indistinguishable from a missing one).
 *
 * A route that takes a body is sent a valid one (BODIES below) so that a route which validates its body before
 * it looks at the wallet still reaches the wallet; a new route with a body the empty object does not satisfy
 * fails here with 400 until it is given one.
 */
import assert from 'node:assert/strict';
import { mintAgent, useTestTreasury } from '../../support/api-harness.js';
import { paymentRequirements, SELLER_ADDRESS } from '../../builders/payment-requirements.js';

/** Valid bodies, by `METHOD path` as the route table spells it; any other route is sent `{}`. */
const BODIES: Record<string, unknown> = {
  'PUT /v1/wallets/{id}/policy': { per_tx_cap_usd: '5' },
  'POST /v1/wallets/{id}/policy/evaluate': { kind: 'pay', to: SELLER_ADDRESS, amount_usd: '1' },
  'POST /v1/wallets/{id}/pay': { payment_requirements: paymentRequirements() },
  'POST /v1/wallets/{id}/transfer': { to: SELLER_ADDRESS, amount_usd: '1' },
  'POST /v1/wallets/{id}/authorizations/{authorization_id}/settlement': { transaction: `0x${'ab'.repeat(32)}` },
  'POST /v1/wallets/{id}/rotate': { abandon_balance: true },
  'POST /v1/wallets/{id}/revoke': { abandon_balance: true },
};

/** A syntactically valid value for each path parameter other than the wallet's id. */
const PARAMS: Record<string, string> = {
  authorization_id: `auth_${'0'.repeat(24)}`,
};

describe('a revoked wallet answers 410 on every route of it (route table walk)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();

  const walletRoutes = () => t.app.routes.filter((r) => r.path.startsWith('/v1/wallets/{id}'));

  function urlOf(path: string, walletId: string): string {
    return path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
      if (name === 'id') return walletId;
      const value = PARAMS[name];
      assert.ok(value, `no sample value for path parameter {${name}}: add one to PARAMS`);
      return value;
    });
  }

  it('walks at least the wallet routes known today', () => {
    const known = walletRoutes().map((r) => `${r.method} ${r.path}`);
    for (const route of Object.keys(BODIES)) assert.ok(known.includes(route), `${route} is not in the route table`);
    assert.ok(known.includes('GET /v1/wallets/{id}'));
    assert.ok(known.includes('GET /v1/wallets/{id}/balance'));
    assert.ok(known.includes('GET /v1/wallets/{id}/policy'));
  });

  it('answers 410 wallet_revoked to its owner and 404 wallet_not_found to another account, on every route', async () => {
    const { apiKey: owner } = await mintAgent(t, 'revoked-walk-owner');
    const { apiKey: stranger } = await mintAgent(t, 'revoked-walk-stranger');
    const created = await t.request('POST', '/v1/wallets', { token: owner, body: { label: 'doomed' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const walletId = created.body.id as string;
    const revoked = await t.request('POST', `/v1/wallets/${walletId}/revoke`, {
      token: owner,
      body: { abandon_balance: true },
    });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));

    const routes = walletRoutes();
    assert.ok(routes.length >= 10, `only ${routes.length} wallet routes found`);
    const wrong: string[] = [];
    for (const { method, path } of routes) {
      const key = `${method} ${path}`;
      const body = method === 'GET' || method === 'DELETE' ? undefined : (BODIES[key] ?? {});
      const url = urlOf(path, walletId);
      const mine = await t.request(method, url, { token: owner, ...(body === undefined ? {} : { body }) });
      if (mine.status !== 410 || mine.body?.error_code !== 'wallet_revoked')
        wrong.push(`${key} (owner): ${mine.status} ${JSON.stringify(mine.body)}`);
      else assert.equal(mine.body.wallet_id, walletId, key);
      const theirs = await t.request(method, url, { token: stranger, ...(body === undefined ? {} : { body }) });
      if (theirs.status !== 404 || theirs.body?.error_code !== 'wallet_not_found')
        wrong.push(`${key} (another account): ${theirs.status} ${JSON.stringify(theirs.body)}`);
    }
    assert.deepEqual(wrong, [], `routes that do not answer as a revoked wallet should:\n${wrong.join('\n')}`);
  });
});
