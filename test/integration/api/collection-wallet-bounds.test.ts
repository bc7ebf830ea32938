/**
 * The merchant of record's collection wallets under one tenant's load (real PostgreSQL, real SoftHSM signer):
 * the platform's own account has no wallet bound shared by every tenant — one tenant's `platform_mor` sellers
 * filling it left every other tenant's new seller without a collection address (409 `wallet_limit_reached` on
 * `POST /v1/auth/verify`) — and a tenant's part of it is bounded by its sellers (409 `seller_limit_reached`);
 * first collection wallets asked for at once no longer hold every pooled connection (each creation holds its
 * lock's transaction while the wallet takes a second connection: with the pool full of them, every request of
 * every tenant waited out the pool's 60-s acquire timeout, and most of the creations answered 503).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createKnex } from '../../../src/api/db/knex-client.js';
import { startTestTreasury, useTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const NETWORK = 'eip155:84532';

/** `count` new `platform_mor` sellers of the session's account (names no other test uses); their service PATs. */
async function registerMoRSellers(t: TestTreasury, session: string, count: number): Promise<string[]> {
  const pats: string[] = [];
  const tag = randomBytes(4).toString('hex');
  for (let i = 0; i < count; i++) {
    const res = await t.request('POST', '/v1/sellers', {
      token: session,
      body: { name: `shop ${tag} ${i}`, payout_mode: 'platform_mor' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    pats.push(res.body.pat as string);
  }
  return pats;
}

describe('collection wallets: bounded per tenant, never shared (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(240_000);
  const t = useTestTreasury({
    extraEnv: {
      TREASURY_MAX_WALLETS_PER_ACCOUNT: '2',
      TREASURY_MAX_SELLERS_PER_ACCOUNT: '3',
    },
  });

  const moRSellers = (session: string, count: number) => registerMoRSellers(t, session, count);
  const verify = (pat: string) => t.request('POST', '/v1/auth/verify', { token: pat, body: { network: NETWORK } });

  it("one tenant's sellers past the account wallet bound leave another tenant's seller its collection address", async () => {
    const first = await signInWithNewKey(t);
    for (const pat of await moRSellers(first.session, 3)) {
      const res = await verify(pat);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.match(res.body.collect_to as string, /^0x[0-9a-fA-F]{40}$/);
    }
    const other = await signInWithNewKey(t);
    const [mine] = await moRSellers(other.session, 1);
    const res = await verify(mine!);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.collect_to as string, /^0x[0-9a-fA-F]{40}$/);
  });

  it('a tenant registers at most TREASURY_MAX_SELLERS_PER_ACCOUNT sellers, then 409 seller_limit_reached', async () => {
    const me = await signInWithNewKey(t);
    await moRSellers(me.session, 3);
    const refused = await t.request('POST', '/v1/sellers', {
      token: me.session,
      body: { name: 'one too many', payout_mode: 'platform_mor' },
    });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(refused.body.error_code, 'seller_limit_reached');
    assert.equal(refused.body.max_sellers, 3);
    const listed = await t.request('GET', '/v1/sellers', { token: me.session });
    assert.equal((listed.body.sellers as unknown[]).length, 3);
    // Concurrent registrations do not overshoot either.
    const racer = await signInWithNewKey(t);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        t.request('POST', '/v1/sellers', { token: racer.session, body: { name: `racer ${i}` } }),
      ),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 201, 201, 409, 409, 409]);
  });

  it('two sellers registered at once under one name both get a slug (the second the id tail), not 409 slug_taken', async () => {
    const [a, b] = await Promise.all([signInWithNewKey(t), signInWithNewKey(t)]);
    const name = `Same Name ${randomBytes(4).toString('hex')}`;
    const answers = await Promise.all(
      [a, b].map((me) => t.request('POST', '/v1/sellers', { token: me.session, body: { name } })),
    );
    assert.deepEqual(
      answers.map((r) => r.status),
      [201, 201],
      JSON.stringify(answers.map((r) => r.body)),
    );
    assert.equal(new Set(answers.map((r) => r.body.slug)).size, 2);
  });
});

describe('collection wallets asked for at once (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(240_000);
  // The API's pool as small as a deployment's may be busy: three connections (a pool the test owns, dropped after).
  let t: TestTreasury;
  let database: TestDatabase;
  before(async () => {
    const created = await createTestDatabase();
    await created.knex.destroy();
    database = { ...created, knex: createKnex(created.connectionString, 3, 'treasury-test') };
    t = await startTestTreasury({ database, extraEnv: { TREASURY_MAX_SELLERS_PER_ACCOUNT: '3' } });
  });
  after(async () => {
    await t?.stop();
    await database?.drop();
  });
  const moRSellers = (session: string, count: number) => registerMoRSellers(t, session, count);
  const verify = (pat: string) => t.request('POST', '/v1/auth/verify', { token: pat, body: { network: NETWORK } });

  it('first collection wallets asked for at once, more than the pool holds, all answer and others are served meanwhile', async () => {
    const tenants = await Promise.all([1, 2, 3, 4].map(() => signInWithNewKey(t)));
    const pats = (await Promise.all(tenants.map((me) => moRSellers(me.session, 3)))).flat();
    const verifies = Promise.all(pats.map(verify));
    const bystander = await signInWithNewKey(t);
    const listed = await t.request('GET', '/v1/sellers', { token: bystander.session });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const answers = await verifies;
    assert.deepEqual(
      answers.map((a) => a.status),
      pats.map(() => 200),
      JSON.stringify(answers.map((a) => a.body.error_code ?? null)),
    );
    assert.equal(new Set(answers.map((a) => a.body.collect_to)).size, pats.length);
  });
});
