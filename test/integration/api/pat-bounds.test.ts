/**
 * The bound on live PATs (TREASURY_MAX_PATS_PER_ACCOUNT, 3 here; src/api/platform/pat-bounds.ts) through HTTP
 * with real PostgreSQL and SoftHSM: every path that mints a PAT counts against its holder and answers 409
 * `pat_limit_reached` (with `limit`) past it — owner PATs on /v1/pats (roots, `within_session` and
 * `parent_pat_id` children), a seller's service PATs, the operator's Treasury PATs of an agent's account (the
 * owner's), and the Treasury PATs of an operator-minted account (counted per Treasury account).
 *
 * Defends: minting PATs without end — each is a rate-limit bucket of its own (the limiter keys its buckets
 * by token id: src/api/http/middleware/rate-limit.ts), so more PATs multiplied every per-bearer allowance and
 * filled `rate_limits`. A revoked or spent (single-use, used) PAT frees its slot; concurrent mints at the bound
 * let exactly one through (the count is read under the holder's advisory lock).
 */
import assert from 'node:assert/strict';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const LIMIT = 3;

describe('live PATs per account are bounded (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);
  let t: TestTreasury;

  before(async () => {
    t = await startTestTreasury({ extraEnv: { TREASURY_MAX_PATS_PER_ACCOUNT: String(LIMIT) } });
  });
  after(async () => {
    await t?.stop();
  });

  const assertRefused = (res: { status: number; body: any }, what: string) =>
    assert.deepEqual(
      { status: res.status, code: res.body?.error_code, limit: res.body?.limit },
      { status: 409, code: 'pat_limit_reached', limit: LIMIT },
      `${what}: ${JSON.stringify(res.body)}`,
    );

  it('every owner path mints up to the bound, then 409; a revoked or spent PAT frees its slot', async () => {
    const owner = await signInWithNewKey(t);
    const pats = (body: Record<string, unknown>) => t.request('POST', '/v1/pats', { token: owner.session, body });
    const seller = await t.request('POST', '/v1/sellers', { token: owner.session, body: { name: 'Bound seller' } });
    assert.equal(seller.status, 201, JSON.stringify(seller.body)); // its service PAT is the first
    const agent = await pats({ scope_type: 'agent' });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const withinSession = await pats({ scope_type: 'treasury', within_session: true });
    assert.equal(withinSession.status, 201, JSON.stringify(withinSession.body));

    assertRefused(await pats({ scope_type: 'agent' }), 'a root PAT');
    assertRefused(await pats({ scope_type: 'agent', parent_pat_id: agent.body.id }), 'a child PAT');
    assertRefused(await pats({ scope_type: 'gate', within_session: true }), 'a PAT within the session');
    assertRefused(
      await t.request('POST', `/v1/sellers/${seller.body.seller_id}/pats`, { token: owner.session, body: {} }),
      'a service PAT',
    );
    assertRefused(
      await t.request('POST', `/v1/treasuries/${withinSession.body.scope_id}/pats`, { token: t.adminToken, body: {} }),
      "the operator's Treasury PAT of the agent's account",
    );
    const live = await t.db.knex('api_tokens').where({ kind: 'pat', account_id: owner.account_id }).count({ n: '*' });
    assert.equal(Number(live[0]!.n), LIMIT, 'nothing was written past the bound');

    const revoked = await t.request('DELETE', `/v1/pats/${withinSession.body.id}`, { token: owner.session });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    const handoff = await pats({ scope_type: 'agent', single_use: true, parent_pat_id: agent.body.id });
    assert.equal(handoff.status, 201, `a revoked PAT frees its slot: ${JSON.stringify(handoff.body)}`);
    assertRefused(await pats({ scope_type: 'agent' }), 'full again');
    assert.equal((await t.request('GET', '/v1/wallets', { token: handoff.body.pat })).status, 200);
    const next = await pats({ scope_type: 'agent' });
    assert.equal(next.status, 201, `a spent single-use PAT frees its slot: ${JSON.stringify(next.body)}`);
  });

  it('an operator-minted account counts its own Treasury PATs, whoever mints them; accounts apart', async () => {
    const mintAccount = async (ownerId: string) => {
      const r = await t.request('POST', '/v1/treasury', {
        token: t.adminToken,
        body: { owner_type: 'org', owner_id: ownerId },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body as { id: string; api_key: string };
    };
    const account = await mintAccount('bounded');
    const other = await mintAccount('bounded-other');
    const mint = (id: string, token: string) => t.request('POST', `/v1/treasuries/${id}/pats`, { token, body: {} });
    for (const token of [account.api_key, t.adminToken, account.api_key])
      assert.equal((await mint(account.id, token)).status, 201);
    assertRefused(await mint(account.id, account.api_key), 'the api key');
    assertRefused(await mint(account.id, t.adminToken), 'the operator');
    assert.equal((await mint(other.id, other.api_key)).status, 201, 'another account has its own count');

    const ended = await t.request('POST', `/v1/treasuries/${account.id}/credentials/revoke`, { token: t.adminToken });
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    assert.equal((await mint(account.id, t.adminToken)).status, 201, 'revoked PATs free their slots');
  });

  it('concurrent mints one short of the bound: exactly one goes through', async () => {
    for (let round = 0; round < 3; round++) {
      const owner = await signInWithNewKey(t);
      const pats = () => t.request('POST', '/v1/pats', { token: owner.session, body: { scope_type: 'agent' } });
      for (let i = 0; i < LIMIT - 1; i++) assert.equal((await pats()).status, 201);
      const answers = await Promise.all([pats(), pats()]);
      assert.deepEqual(
        answers.map((a) => a.status).sort(),
        [201, 409],
        `round ${round}: ${JSON.stringify(answers.map((a) => a.body))}`,
      );
    }
  });
});
