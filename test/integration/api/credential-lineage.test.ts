/**
 * Credential lineage through HTTP with real PostgreSQL and SoftHSM (docs/security-model.md, "Credential
 * lineage"): no credential outlives or outranks the credential whose authority it was made with.
 * - a Treasury PAT (the dashboard's 15-minute one included) mints no Treasury PAT; the operator and the
 *   account's legacy api key do, and the key's PATs are its children (bounded by it, revoked with it, but
 *   for the successor PAT that retires the key);
 * - a Treasury PAT minted by the operator for an agent's Treasury account belongs to the owner's account:
 *   listed by GET /v1/pats and revoked by DELETE /v1/pats/{id};
 * - a PAT minted within an agent PAT (`parent_pat_id`, the `xx dashboard` handoff) keeps its scope, its
 *   daily cap and daily total, and no later expiry; asking more is 403 `lineage_exceeds_parent`;
 * - revoking a parent ends every descendant (cached ones too), and a token any of whose ancestors is
 *   revoked or expired is refused even when its own row says nothing;
 * - revoke-all ends every session of the account and what was made within them; PATs the owner minted
 *   with a sign-in session are roots of the account and stay, unless minted `within_session` (the
 *   dashboard's): those are the session's children, never outliving it, ended with it;
 * - exchange-pat keeps at most three live sessions per PAT.
 */
import assert from 'node:assert/strict';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { hashToken } from '../../../src/api/auth/token-codec.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe('credential lineage (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let owner: Awaited<ReturnType<typeof signInWithNewKey>>;
  let treasuryAccountId: string;

  const mintPat = async (body: Record<string, unknown>, token = owner.session) => {
    const res = await t.request('POST', '/v1/pats', { token, body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string; pat: string; expires_at: string | null; daily_cap_usd: string | null };
  };
  const agentPat = (body: Record<string, unknown> = {}) =>
    mintPat({ scope_type: 'agent', scope_id: owner.agent_id, ...body });
  const status = async (token: string) => (await t.request('GET', '/v1/auth/whoami', { token })).status;
  const exchange = async (pat: string): Promise<string> => {
    const res = await t.request('POST', '/v1/identity/exchange-pat', { token: pat });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.session as string;
  };
  const listed = async (session = owner.session) => {
    const res = await t.request('GET', '/v1/pats?limit=500', { token: session });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.pats as Array<{ id: string; parent_token_id: string | null; created_by: string }>;
  };

  before(async () => {
    // A long bearer cache (10 s): revocations must still end cached descendants at once.
    t = await startTestTreasury({ extraEnv: { TREASURY_AUTH_CACHE_MS: '10000' } });
    owner = await signInWithNewKey(t);
    const agent = await t.db.knex('agents').where({ id: owner.agent_id }).first('treasury_account_id');
    treasuryAccountId = agent.treasury_account_id as string;
  });
  after(async () => {
    await t?.stop();
  });

  it('a Treasury PAT — the dashboard’s 15-minute one included — mints no Treasury PAT: 403 insufficient_scope', async () => {
    const dashboard = await mintPat({
      scope_type: 'treasury',
      scope_id: treasuryAccountId,
      label: 'dashboard',
      expires_in_seconds: 900,
    });
    const forever = await mintPat({ scope_type: 'treasury', scope_id: treasuryAccountId });
    for (const token of [dashboard.pat, forever.pat, (await agentPat()).pat, owner.session]) {
      const res = await t.request('POST', `/v1/treasuries/${treasuryAccountId}/pats`, { token, body: {} });
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal(res.body.error_code, 'insufficient_scope');
    }
    const minted = await t.db.knex('api_tokens').where({ scope_id: treasuryAccountId, kind: 'pat' }).count({ n: '*' });
    assert.equal(Number(minted[0]!.n), 2, 'only the two the owner minted');
  });

  it('a Treasury PAT the operator mints for an agent’s Treasury account is the owner’s: listed and revoked by the owner', async () => {
    const minted = await t.request('POST', `/v1/treasuries/${treasuryAccountId}/pats`, {
      token: t.adminToken,
      body: { label: 'ops' },
    });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    const view = (await listed()).find((p) => p.id === minted.body.id);
    assert.ok(view, 'GET /v1/pats lists it');
    assert.deepEqual([view.parent_token_id, view.created_by], [null, 'admin']);
    const revoked = await t.request('DELETE', `/v1/pats/${minted.body.id}`, { token: owner.session });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal(await status(minted.body.token), 401);
  });

  it('a PAT minted with the legacy api key is its child: no later expiry, and revoked with the key', async () => {
    const account = await t.request('POST', '/v1/treasury', {
      token: t.adminToken,
      body: { owner_type: 'org', owner_id: 'lineage' },
    });
    const key = account.body.api_key as string;
    const child = await t.request('POST', `/v1/treasuries/${account.body.id}/pats`, { token: key, body: {} });
    assert.equal(child.status, 201, JSON.stringify(child.body));
    const keyRow = await t.db
      .knex('api_tokens')
      .where({ token_hash: hashToken(key) })
      .first('id');
    const row = await t.db.knex('api_tokens').where({ id: child.body.id }).first('parent_token_id');
    assert.equal(row.parent_token_id, keyRow.id);
    assert.equal((await t.request('GET', '/v1/wallets', { token: child.body.token })).status, 200);
    // The owner of the key retires it: what it minted ends with it.
    const retired = await t.request('POST', `/v1/treasuries/${account.body.id}/api-key/revoke`, { token: key });
    assert.equal(retired.status, 200, JSON.stringify(retired.body));
    const after = await t.request('GET', '/v1/wallets', { token: child.body.token });
    assert.equal(after.status, 401);
    assert.equal(after.body.error_code, 'invalid_token');
    const stored = await t.db.knex('api_tokens').where({ id: child.body.id }).first('revoked_at');
    assert.ok(stored.revoked_at, 'revoked in the same transaction');
  });

  it('retiring the key with a PAT it minted keeps that successor (a root now) and ends everything else it made', async () => {
    const account = await t.request('POST', '/v1/treasury', {
      token: t.adminToken,
      body: { owner_type: 'org', owner_id: 'succession' },
    });
    const mint = async () =>
      (await t.request('POST', `/v1/treasuries/${account.body.id}/pats`, { token: account.body.api_key, body: {} }))
        .body as { id: string; token: string };
    const successor = await mint();
    const leaked = await mint();
    const retired = await t.request('POST', `/v1/treasuries/${account.body.id}/api-key/revoke`, {
      token: successor.token,
    });
    assert.equal(retired.status, 200, JSON.stringify(retired.body));
    assert.equal((await t.request('GET', '/v1/wallets', { token: successor.token })).status, 200);
    assert.equal((await t.request('GET', '/v1/wallets', { token: leaked.token })).status, 401);
    assert.equal((await t.request('GET', '/v1/wallets', { token: account.body.api_key })).status, 401);
    const row = await t.db.knex('api_tokens').where({ id: successor.id }).first('parent_token_id');
    assert.equal(row.parent_token_id, null);
  });

  it('a PAT minted within an agent PAT keeps its agent, its daily cap and total, and no later expiry', async () => {
    const parent = await agentPat({ daily_cap_usd: '5', label: 'agent', expires_in_seconds: 3600 });
    // The owner makes the wallet (an agent PAT's own wallet gets a default policy within its cap, which would
    // refuse the $4 payment before the PAT's day total is reached; tenant-bounds.test.ts tests that policy).
    const wallet = await t.request('POST', `/v1/agents/${owner.agent_id}/wallets`, {
      token: owner.session,
      body: { label: 'lineage' },
    });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    const handoff = await agentPat({ single_use: true, expires_in_seconds: 7200, parent_pat_id: parent.id });
    assert.equal(handoff.daily_cap_usd, '5', 'the parent’s cap is inherited');
    assert.ok(Date.parse(handoff.expires_at!) <= Date.parse(parent.expires_at!), 'no later than the parent');

    const pay = (token: string) =>
      t.request('POST', `/v1/wallets/${wallet.body.id}/pay`, {
        token,
        body: { payment_requirements: paymentRequirements({ amount: '4000000' }) },
      });
    const paid = await pay(parent.pat);
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    const session = await exchange(handoff.pat);
    const over = await pay(session);
    assert.equal(over.status, 429, 'the handoff session spends from the agent PAT’s $5 a day');
    assert.equal(over.body.error_code, 'MGMT_6014');
    assert.match(over.body.recovery.settings_url, new RegExp(`/settings/pats/${parent.id}$`));

    const second = await t.request('POST', '/v1/agents', { token: owner.session, body: { label: 'other' } });
    assert.equal(second.status, 201, JSON.stringify(second.body));
    const beyond = [
      { scope_type: 'agent', scope_id: owner.agent_id, daily_cap_usd: '50', parent_pat_id: parent.id },
      // A lower cap of its own would be a second total beside the parent's: it shares the parent's instead.
      { scope_type: 'agent', scope_id: owner.agent_id, daily_cap_usd: '1', parent_pat_id: parent.id },
      { scope_type: 'agent', scope_id: second.body.agent_id ?? second.body.id, parent_pat_id: parent.id },
      { scope_type: 'treasury', parent_pat_id: parent.id },
    ];
    for (const body of beyond) {
      const res = await t.request('POST', '/v1/pats', { token: owner.session, body });
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal(res.body.error_code, 'lineage_exceeds_parent');
    }
    const lifted = await t.request('PATCH', `/v1/pats/${handoff.id}`, {
      token: owner.session,
      body: { daily_cap_usd: null },
    });
    assert.equal(lifted.status, 403, 'its cap is its parent’s');
    assert.equal(lifted.body.error_code, 'lineage_exceeds_parent');
  });

  it('revoking a parent ends every descendant at once, cached sessions included', async () => {
    const parent = await agentPat({ daily_cap_usd: '1' });
    const child = await agentPat({ parent_pat_id: parent.id });
    const session = await exchange(child.pat);
    assert.equal(await status(session), 200); // now cached for 10 s
    assert.equal(await status(child.pat), 200);
    const revoked = await t.request('DELETE', `/v1/pats/${parent.id}`, { token: owner.session });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal(await status(child.pat), 401);
    assert.equal(await status(session), 401);
    const rows = await t.db
      .knex('api_tokens')
      .whereIn('token_hash', [hashToken(child.pat), hashToken(session)])
      .select('revoked_at');
    assert.equal(rows.length, 2);
    assert.ok(
      rows.every((r) => r.revoked_at !== null),
      'the whole subtree is revoked in the database',
    );
    // Nothing is made within the revoked PAT; the owner's own session is fine, so the answer is no 401.
    const within = await t.request('POST', '/v1/pats', {
      token: owner.session,
      body: { scope_type: 'agent', scope_id: owner.agent_id, parent_pat_id: parent.id },
    });
    assert.equal(within.status, 403, JSON.stringify(within.body));
    assert.deepEqual([within.body.error_code, within.body.refused], ['lineage_exceeds_parent', 'parent_not_live']);
  });

  it('a token is refused when any ancestor expired or was revoked, whatever its own row says', async () => {
    for (const end of [{ expires_at: new Date(Date.now() - 1000) }, { revoked_at: new Date() }]) {
      const parent = await agentPat();
      const child = await agentPat({ parent_pat_id: parent.id });
      await t.db.knex('api_tokens').where({ id: parent.id }).update(end);
      const res = await t.request('GET', '/v1/auth/whoami', { token: child.pat });
      assert.equal(res.status, 401, JSON.stringify(end));
      assert.equal(res.body.error_code, 'invalid_token');
    }
  });

  it('exchange-pat keeps at most three live sessions per PAT; the newest work, older ones end', async () => {
    const pat = await agentPat();
    const sessions: string[] = [];
    for (let i = 0; i < 8; i++) sessions.push(await exchange(pat.pat));
    const live = await t.db
      .knex('api_tokens')
      .where({ parent_token_id: pat.id, kind: 'session' })
      .whereNull('revoked_at')
      .count({ n: '*' });
    assert.equal(Number(live[0]!.n), 3);
    assert.equal(await status(sessions[0]!), 401);
    for (const s of sessions.slice(-3)) assert.equal(await status(s), 200);
  });

  it('revoke-all ends every session and what was made within them; PATs minted by a sign-in session stay', async () => {
    const other = await signInWithNewKey(t);
    const pat = await mintPat({ scope_type: 'agent', scope_id: other.agent_id }, other.session);
    const dashboard = await mintPat({ scope_type: 'treasury', expires_in_seconds: 900 }, other.session);
    const exchanged = await exchange(pat.pat);
    const res = await t.request('POST', '/v1/auth/sessions/revoke-all', { token: other.session });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.revoked, 2);
    assert.equal(await status(other.session), 401);
    assert.equal(await status(exchanged), 401);
    assert.equal(await status(pat.pat), 200, 'the owner minted it on purpose: a root of the account');
    assert.equal(await status(dashboard.pat), 200);
  });

  it('a PAT minted within_session is the session’s child: no later expiry, and ended by sign-out or revoke-all', async () => {
    for (const end of ['logout', 'revoke-all'] as const) {
      const other = await signInWithNewKey(t);
      const kept = await mintPat({ scope_type: 'treasury', expires_in_seconds: 900 }, other.session);
      const within = await mintPat(
        { scope_type: 'treasury', label: 'dashboard', expires_in_seconds: 900, within_session: true },
        other.session,
      );
      const forever = await mintPat({ scope_type: 'agent', within_session: true }, other.session);
      const sessionRow = await t.db
        .knex('api_tokens')
        .where({ token_hash: hashToken(other.session) })
        .first('id', 'expires_at');
      const rows = await t.db.knex('api_tokens').whereIn('id', [within.id, forever.id]).select('id', 'parent_token_id');
      assert.deepEqual(
        rows.map((r) => r.parent_token_id),
        [sessionRow.id, sessionRow.id],
      );
      assert.equal(
        forever.expires_at,
        (sessionRow.expires_at as Date).toISOString(),
        'a PAT asked for without expiry ends with the session',
      );
      assert.equal(await status(within.pat), 200); // cached now for 10 s
      const ended =
        end === 'logout'
          ? await t.request('POST', '/v1/auth/logout', { token: other.session })
          : await t.request('POST', '/v1/auth/sessions/revoke-all', { token: other.session });
      assert.equal(ended.status, 200, JSON.stringify(ended.body));
      assert.equal(await status(within.pat), 401, `${end}: the session's PAT ends with it`);
      assert.equal(await status(forever.pat), 401);
      assert.equal(await status(kept.pat), 200, 'a PAT minted as a root of the account stays');
    }
  });

  it('within_session: a session of the account only; not beside parent_pat_id; never another account’s scope', async () => {
    const other = await signInWithNewKey(t);
    const both = await t.request('POST', '/v1/pats', {
      token: other.session,
      body: { scope_type: 'agent', within_session: true, parent_pat_id: (await agentPat()).id },
    });
    assert.equal(both.status, 400, JSON.stringify(both.body));
    const foreign = await t.request('POST', '/v1/pats', {
      token: other.session,
      body: { scope_type: 'agent', scope_id: owner.agent_id, within_session: true },
    });
    assert.equal(foreign.body.error_code, 'scope_not_found', JSON.stringify(foreign.body));
    const exchanged = await exchange((await agentPat()).pat);
    const fromExchanged = await t.request('POST', '/v1/pats', {
      token: exchanged,
      body: { scope_type: 'agent', within_session: true },
    });
    assert.equal(fromExchanged.status, 403, 'an exchanged session mints no PAT, within itself or not');
  });
});
