/**
 * A seller is the owner's, through HTTP with real PostgreSQL and SoftHSM: a session exchanged from an agent
 * PAT is refused (403 `fresh_sign_in_required`) every seller-management action — registering a seller (its
 * answer carries a service PAT), an endpoint's price (create, change, delete), suspend and resume, banking,
 * payout mode, origin and OpenAPI URL, origin verification and OpenAPI refresh — and nothing it asked for is
 * written: the `mpp` seller's gate catalogue still names the owner's origin. It reads no more than the agent
 * PAT it was exchanged from either (a credential never outranks what made it): the account's sellers, a
 * seller's profile, banking, verification token, payouts, pay-to, endpoints and discovery, and the ledger
 * (rows, revenue, export) are refused to both. The owner's sign-in session and the seller's service PAT still
 * read and manage it.
 */
import assert from 'node:assert/strict';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe('seller management needs the owner (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let owner: Awaited<ReturnType<typeof signInWithNewKey>>;
  let agentPat: string;
  let exchanged: string;
  let gatePat: string;
  let seller: { seller_id: string; pat: string };
  let endpointId: string;
  const ORIGIN = 'https://shop.example.com';

  before(async () => {
    t = await startTestTreasury();
    owner = await signInWithNewKey(t);
    const mint = async (body: unknown) => (await t.request('POST', '/v1/pats', { token: owner.session, body })).body;
    agentPat = (await mint({ scope_type: 'agent', scope_id: owner.agent_id })).pat as string;
    gatePat = (await mint({ scope_type: 'gate' })).pat as string;
    exchanged = (await t.request('POST', '/v1/identity/exchange-pat', { token: agentPat })).body.session as string;
    seller = (
      await t.request('POST', '/v1/sellers', {
        token: owner.session,
        body: { name: 'Owned', protocol: 'mpp', origin: ORIGIN, legal_entity: 'Owner Ltd', country: 'GB' },
      })
    ).body;
    assert.ok(seller.seller_id, JSON.stringify(seller));
    const ep = await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
      token: owner.session,
      body: { path: '/paid', price: '0.25' },
    });
    assert.equal(ep.status, 201, JSON.stringify(ep.body));
    endpointId = ep.body.endpoint_id;
  });
  after(async () => {
    await t?.stop();
  });

  const sellerPath = (suffix = '') => `/v1/sellers/${seller.seller_id}${suffix}`;
  /** Each management action an exchanged session might try: method, path (under the seller unless absolute), body. */
  const ACTIONS: Array<[string, string, unknown?]> = [
    ['POST', '/v1/sellers', { name: 'Agent-made' }],
    ['PATCH', '/endpoints/{ep}', { price: '0' }],
    ['POST', '/endpoints', { path: '/free', price: '0' }],
    ['DELETE', '/endpoints/{ep}'],
    ['POST', '/suspend'],
    ['POST', '/resume'],
    ['PUT', '/banking', { legal_entity: 'Agent Ltd', country: 'FR' }],
    ['PATCH', '', { payout_mode: 'platform_mor' }],
    ['PATCH', '', { origin: 'http://127.0.0.1:8402' }],
    ['PATCH', '', { openapi_url: 'http://127.0.0.1:8402/v1/openapi.json' }],
    ['POST', '/verify'],
    ['POST', '/refresh'],
  ];

  it('refuses an exchanged session every management action, and writes nothing of it', async () => {
    const sellersBefore = await t.db.knex('sellers').where({ account_id: owner.account_id }).count({ n: '*' });
    const patsBefore = await t.db.knex('api_tokens').where({ scope_type: 'service' }).count({ n: '*' });
    const got: string[] = [];
    for (const [method, where, body] of ACTIONS) {
      const path = where.startsWith('/v1/') ? where : sellerPath(where.replace('{ep}', endpointId));
      const res = await t.request(method, path, { token: exchanged, ...(body === undefined ? {} : { body }) });
      got.push(`${method} ${where} ${JSON.stringify(body ?? null)} → ${res.status} ${res.body?.error_code ?? ''}`);
    }
    assert.deepEqual(
      got,
      ACTIONS.map(
        ([method, where, body]) => `${method} ${where} ${JSON.stringify(body ?? null)} → 403 fresh_sign_in_required`,
      ),
    );

    const row = await t.db.knex('sellers').where({ id: seller.seller_id }).first();
    assert.equal(row.status, 'active');
    assert.equal(row.origin, ORIGIN);
    assert.equal(row.openapi_url, null);
    assert.equal(row.payout_mode, 'direct');
    assert.equal(row.legal_entity, 'Owner Ltd');
    assert.equal(row.country, 'GB');
    const ep = await t.db.knex('endpoints').where({ seller_id: seller.seller_id });
    assert.deepEqual(
      ep.map((e) => [e.path, e.price_micro]),
      [['/paid', '250000']],
    );
    assert.deepEqual(
      await t.db.knex('sellers').where({ account_id: owner.account_id }).count({ n: '*' }),
      sellersBefore,
    );
    assert.deepEqual(await t.db.knex('api_tokens').where({ scope_type: 'service' }).count({ n: '*' }), patsBefore);
    const catalogue = await t.request('GET', '/v1/gate/catalogue', { token: gatePat });
    assert.equal(catalogue.status, 200, JSON.stringify(catalogue.body));
    assert.deepEqual(
      catalogue.body.sellers.map((s: { origin: string }) => s.origin),
      [ORIGIN],
      "the gate still proxies to the owner's origin",
    );
  });

  /** Every read of the account's sellers and their ledger, and who besides the owner may make it. */
  const READS = (): Array<[path: string, servicePat: boolean]> => [
    ['/v1/sellers', false],
    [sellerPath(), true],
    [sellerPath('/banking'), true],
    [sellerPath('/verify'), true],
    [sellerPath('/payouts'), true],
    [sellerPath('/pay-to'), true],
    [sellerPath('/endpoints'), true],
    [sellerPath('/discovery'), true],
    [`/v1/ledger?seller_id=${seller.seller_id}`, true],
    [`/v1/ledger/revenue?seller_id=${seller.seller_id}`, true],
    [`/v1/ledger/export?format=csv&seller_id=${seller.seller_id}`, true],
  ];

  it("refuses a session exchanged from an agent PAT every read its PAT is refused: the owner's sellers and ledger", async () => {
    const outcome = async (path: string, token: string) => {
      const res = await t.request('GET', path, { token });
      return `GET ${path} → ${res.status} ${res.body?.error_code ?? ''}`;
    };
    const got: string[] = [];
    const want: string[] = [];
    for (const [path, servicePat] of READS()) {
      got.push(await outcome(path, agentPat), await outcome(path, exchanged));
      want.push(`GET ${path} → 403 insufficient_scope`, `GET ${path} → 403 fresh_sign_in_required`);
      // The owner's sign-in session reads it all; the service PAT its own seller.
      for (const token of servicePat ? [owner.session, seller.pat] : [owner.session]) {
        const res = await t.request('GET', path, { token });
        assert.equal(res.status, 200, `GET ${path}: ${JSON.stringify(res.body)}`);
      }
    }
    assert.deepEqual(got, want);
    // The session still acts as its agent, as its PAT does, and still ends itself.
    assert.equal((await t.request('GET', `/v1/agents/${owner.agent_id}`, { token: exchanged })).status, 200);
    const own = (await t.request('POST', '/v1/identity/exchange-pat', { token: agentPat })).body.session as string;
    assert.equal((await t.request('POST', '/v1/auth/logout', { token: own })).status, 200);
  });

  it('still lets the owner and the service PAT manage the seller', async () => {
    for (const token of [owner.session, seller.pat]) {
      const price = await t.request('PATCH', sellerPath(`/endpoints/${endpointId}`), { token, body: { price: '0.3' } });
      assert.equal(price.status, 200, JSON.stringify(price.body));
      const mode = await t.request('PATCH', sellerPath(), { token, body: { payout_mode: 'direct' } });
      assert.equal(mode.status, 200, JSON.stringify(mode.body));
      assert.equal((await t.request('POST', sellerPath('/suspend'), { token })).status, 200);
      assert.equal((await t.request('POST', sellerPath('/resume'), { token })).status, 200);
    }
    const made = await t.request('POST', '/v1/sellers', { token: owner.session, body: { name: 'Owner-made' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
  });
});
