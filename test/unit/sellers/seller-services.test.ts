/**
 * The seller services (src/api/sellers/seller-service.ts, seller-endpoint-service.ts) on fakes of their stores
 * (test/support/fake-seller-stores.ts), without PostgreSQL: who may manage a seller (its owner's sign-in
 * session or its own service PAT; anyone else is told the seller does not exist, or that the bearer lacks the
 * scope — a session exchanged from an agent PAT as that PAT is), and
 * the endpoint bound (an endpoint past it is refused and nothing is added).
 */
import assert from 'node:assert/strict';
import type { Principal } from '../../../src/api/auth/principal.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createSellerServices } from '../../../src/api/sellers/seller-service.js';
import { FakeEndpointStore, FakeSellerStore } from '../../support/fake-seller-stores.js';

const NOW = new Date(Date.UTC(2026, 10, 1));

function wing(maxEndpoints = 1_000) {
  const sellers = new FakeSellerStore();
  const endpoints = new FakeEndpointStore();
  let n = 0;
  const services = createSellerServices({
    sellers,
    endpoints,
    pats: { create: async () => ({ id: `pat_${++n}`, pat: `xx_pat_${n}` }) as never },
    clock: () => NOW,
    options: { allowPrivateOrigins: false, maxEndpoints },
  });
  return { sellers, endpoints, services };
}

function bearer(over: Partial<Extract<Principal, { kind: 'token' }>>): Principal {
  return {
    kind: 'token',
    actor: 'tester',
    tokenId: 'tok_1',
    tokenKind: 'session',
    scopeType: 'account',
    scopeId: 'acct_1',
    gate: false,
    accountId: 'acct_1',
    dailyCapMicro: null,
    sessionOrigin: 'sign_in',
    parentTokenId: null,
    spendingPatId: null,
    ...over,
  } as Principal;
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: unknown) => (err instanceof AppError ? err.code : String(err)),
  );

describe('seller services (fake stores)', () => {
  it("a seller is managed by its owner's session or its own service PAT only", async () => {
    const { services } = wing();
    const a = await services.profiles.create('acct_1', { name: 'Jokes' }, 'tester');
    const b = await services.profiles.create('acct_2', { name: 'Jokes' }, 'tester');
    assert.notEqual(a.slug, b.slug);
    const { profiles } = services;
    assert.equal(await codeOf(profiles.authorize(bearer({}), a.seller_id)), 'ok');
    assert.equal(await codeOf(profiles.authorize(bearer({}), b.seller_id)), 'seller_not_found');
    const servicePat = (scopeId: string) =>
      bearer({ tokenKind: 'pat', scopeType: 'service', scopeId, accountId: null, sessionOrigin: null });
    assert.equal(await codeOf(profiles.authorize(servicePat(a.seller_id), a.seller_id)), 'ok');
    assert.equal(await codeOf(profiles.authorize(servicePat(b.seller_id), a.seller_id)), 'seller_not_found');
    const agentPat = bearer({ tokenKind: 'pat', scopeType: 'agent', scopeId: 'agt_1', sessionOrigin: null });
    assert.equal(await codeOf(profiles.authorize(agentPat, a.seller_id)), 'insufficient_scope');
    // Its exchanged session, of the seller's own account, gets no more than the PAT.
    const exchanged = bearer({
      scopeType: 'agent',
      scopeId: 'agt_1',
      sessionOrigin: 'pat_exchange',
      parentTokenId: 'tok_0',
    });
    assert.equal(await codeOf(profiles.authorize(exchanged, a.seller_id)), 'insufficient_scope');
  });

  it('an endpoint past the bound is refused and nothing is added', async () => {
    const { services, endpoints } = wing(2);
    const seller = await services.profiles.authorize(
      bearer({}),
      (await services.profiles.create('acct_1', { name: 'Jokes' }, 'tester')).seller_id,
    );
    for (const path of ['/a', '/b']) await services.endpoints.create(seller, { path, price: '0.01' });
    assert.equal(
      await codeOf(services.endpoints.create(seller, { path: '/c', price: '0.01' })),
      'endpoint_limit_reached',
    );
    assert.deepEqual(
      endpoints.endpoints.map((e) => e.path),
      ['/a', '/b'],
    );
  });

  it('an endpoint named by ledger rows is not deleted', async () => {
    const { services, endpoints } = wing();
    const id = (await services.profiles.create('acct_1', { name: 'Jokes' }, 'tester')).seller_id;
    const seller = await services.profiles.authorize(bearer({}), id);
    const ep = await services.endpoints.create(seller, { path: '/a', price: '0.01' });
    endpoints.withLedger.add(ep.endpoint_id);
    assert.equal(await codeOf(services.endpoints.delete(seller, ep.endpoint_id)), 'endpoint_has_ledger');
    endpoints.withLedger.clear();
    assert.equal(await codeOf(services.endpoints.delete(seller, ep.endpoint_id)), 'ok');
    assert.equal(await codeOf(services.endpoints.delete(seller, ep.endpoint_id)), 'endpoint_not_found');
  });
});
