/**
 * What a session may do depends on what it was made from, through HTTP with real PostgreSQL and SoftHSM:
 * - a session exchanged from an agent PAT acts as that agent (its wallets: read, pay, transfer; the agent
 *   itself) and answers 403 `fresh_sign_in_required` on everything that controls money — minting, listing,
 *   revoking or changing PATs (the daily cap too), Treasury PATs, spawning agents, service PATs, payout
 *   flushes, ending the account's sessions — and on the account's sellers and their ledger, which its agent
 *   PAT may not read either; wallet policies stay Treasury-only (403);
 * - every catalogued route is walked with such a session: it gets `fresh_sign_in_required` exactly on the
 *   routes the catalogue marks `owner_session` or `owner_session_or_service` (the account's sellers), and
 *   every route that looks like money control is marked so or refuses sessions altogether;
 * - whoami tells a sign-in session from an exchanged one (and names the agent);
 * - revoking the PAT ends the sessions exchanged from it, even cached ones; logout ends the caller's
 *   session; the owner ends every session of the account;
 * - a legacy `xx_treasury_sk_` api key is revoked by the holder of its Treasury account.
 */
import assert from 'node:assert/strict';
import { API_CATALOG } from '../../../src/api/api-catalog.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe('session powers: sign-in vs PAT exchange (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let owner: Awaited<ReturnType<typeof signInWithNewKey>>;
  let agentPat: { id: string; pat: string };
  let walletId: string;

  const exchange = async (pat = agentPat.pat): Promise<string> => {
    const res = await t.request('POST', '/v1/identity/exchange-pat', { token: pat });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.session as string;
  };
  const refusedForFreshSignIn = (res: { status: number; body: any }, what: string) => {
    assert.equal(res.status, 403, `${what}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error_code, 'fresh_sign_in_required', what);
  };

  before(async () => {
    // A long bearer cache (10 s): revocation must still end exchanged sessions at once.
    t = await startTestTreasury({ extraEnv: { TREASURY_AUTH_CACHE_MS: '10000' } });
    owner = await signInWithNewKey(t);
    agentPat = (
      await t.request('POST', '/v1/pats', {
        token: owner.session,
        body: { scope_type: 'agent', scope_id: owner.agent_id, daily_cap_usd: '1' },
      })
    ).body;
    const wallet = await t.request('POST', `/v1/agents/${owner.agent_id}/wallets`, {
      token: agentPat.pat,
      body: { label: 'buyer' },
    });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    walletId = wallet.body.id ?? wallet.body.wallet_id;
  });
  after(async () => {
    await t?.stop();
  });

  it('an exchanged session answers fresh_sign_in_required on PAT mint, list, revoke and cap change, Treasury PATs, agent spawn', async () => {
    const session = await exchange();
    refusedForFreshSignIn(
      await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } }),
      'treasury PAT mint',
    );
    refusedForFreshSignIn(
      await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent' } }),
      'agent PAT mint',
    );
    refusedForFreshSignIn(await t.request('GET', '/v1/pats', { token: session }), 'PAT list');
    refusedForFreshSignIn(
      await t.request('PATCH', `/v1/pats/${agentPat.id}`, { token: session, body: { daily_cap_usd: null } }),
      'lifting its own cap',
    );
    refusedForFreshSignIn(await t.request('DELETE', `/v1/pats/${agentPat.id}`, { token: session }), 'PAT revoke');
    refusedForFreshSignIn(
      await t.request('POST', '/v1/agents', { token: session, body: { label: 'spawned' } }),
      'agent spawn',
    );
    const policy = await t.request('PUT', `/v1/wallets/${walletId}/policy`, { token: session, body: {} });
    assert.equal(policy.status, 403, "wallet policies are never a session's");
    const cap = await t.db.knex('api_tokens').where({ id: agentPat.id }).first('daily_cap_micro', 'revoked_at');
    assert.equal(cap.daily_cap_micro, '1000000', 'the cap the owner set holds');
    assert.equal(cap.revoked_at, null);
    // The owner's fresh sign-in still can, and the owner alone.
    const fresh = await signInWithNewKey(t);
    assert.equal((await t.request('GET', '/v1/pats', { token: owner.session })).status, 200);
    assert.equal(
      (await t.request('POST', '/v1/pats', { token: fresh.session, body: { scope_type: 'treasury' } })).status,
      201,
    );
  });

  it("an exchanged session still reads and pays with its agent's wallets, within the PAT's daily cap", async () => {
    const session = await exchange();
    assert.equal((await t.request('GET', '/v1/wallets', { token: session })).status, 200);
    assert.equal((await t.request('GET', `/v1/wallets/${walletId}`, { token: session })).status, 200);
    assert.equal((await t.request('GET', `/v1/wallets/${walletId}/policy`, { token: session })).status, 200);
    assert.equal((await t.request('GET', `/v1/agents/${owner.agent_id}`, { token: session })).status, 200);
    const paid = await t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token: session,
      body: { payment_requirements: paymentRequirements({ amount: '600000' }) },
    });
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    // The PAT's cap counts the session's spend: $0.60 + $0.60 is above the $1 cap.
    const over = await t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token: session,
      body: { payment_requirements: paymentRequirements({ amount: '600000' }) },
    });
    assert.equal(over.status, 429, JSON.stringify(over.body));
    assert.equal(over.body.error_code, 'MGMT_6014');
    assert.equal(over.body.recovery.kind, 'raise_pat_cap');
    assert.match(over.body.recovery.settings_url, new RegExp(`/settings/pats/${agentPat.id}$`));
    assert.match(over.body.recovery.cli_command, /^xx pat update pat_[0-9a-f]{24} --daily-cap <usd>$/);
  });

  it('whoami tells a sign-in session from a PAT exchange and names the agent it is bound to', async () => {
    const signIn = (await t.request('GET', '/v1/auth/whoami', { token: owner.session })).body;
    assert.equal(signIn.auth_type, 'session');
    assert.equal(signIn.session_origin, 'sign_in');
    assert.equal(signIn.scope_type, 'account');
    assert.equal(signIn.scope_id, owner.account_id);
    const exchanged = (await t.request('GET', '/v1/auth/whoami', { token: await exchange() })).body;
    assert.equal(exchanged.auth_type, 'session');
    assert.equal(exchanged.session_origin, 'pat_exchange');
    assert.equal(exchanged.scope_type, 'agent');
    assert.equal(exchanged.scope_id, owner.agent_id);
    assert.equal(exchanged.agent_id, owner.agent_id);
    assert.equal(exchanged.parent_token_id, agentPat.id);
  });

  it('revoking the PAT ends every session exchanged from it, cached or not', async () => {
    const pat = (await t.request('POST', '/v1/pats', { token: owner.session, body: { scope_type: 'agent' } })).body;
    const [a, b] = [await exchange(pat.pat), await exchange(pat.pat)];
    assert.equal((await t.request('GET', '/v1/wallets', { token: a })).status, 200, 'cached now');
    assert.equal((await t.request('DELETE', `/v1/pats/${pat.id}`, { token: owner.session })).status, 200);
    for (const s of [a, b]) {
      const res = await t.request('GET', '/v1/wallets', { token: s });
      assert.equal(res.status, 401);
      assert.equal(res.body.error_code, 'invalid_token');
    }
    const rows = await t.db.knex('api_tokens').where({ parent_token_id: pat.id });
    assert.equal(rows.length, 2);
    assert.ok(rows.every((r) => r.revoked_at !== null && r.session_origin === 'pat_exchange'));
  });

  it("logout ends the caller's session; the owner ends every session of the account", async () => {
    const exchanged = await exchange();
    assert.equal((await t.request('GET', '/v1/auth/whoami', { token: exchanged })).status, 200);
    const out = await t.request('POST', '/v1/auth/logout', { token: exchanged });
    assert.equal(out.status, 200, JSON.stringify(out.body));
    assert.equal((await t.request('GET', '/v1/auth/whoami', { token: exchanged })).status, 401);
    assert.equal(
      (await t.request('POST', '/v1/auth/logout', { token: agentPat.pat })).status,
      403,
      'a PAT is revoked, not logged out',
    );

    const other = await signInWithNewKey(t);
    const second = await signInWithNewKey(t); // another account: untouched
    const e1 = await exchange();
    refusedForFreshSignIn(
      await t.request('POST', '/v1/auth/sessions/revoke-all', { token: e1 }),
      'revoke-all from an exchanged session',
    );
    const all = await t.request('POST', '/v1/auth/sessions/revoke-all', { token: owner.session });
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.ok(all.body.revoked >= 2);
    for (const s of [e1, owner.session])
      assert.equal((await t.request('GET', '/v1/auth/whoami', { token: s })).status, 401);
    assert.equal(
      (await t.request('GET', '/v1/auth/whoami', { token: agentPat.pat })).status,
      200,
      'PATs stay: they are revoked one by one',
    );
    assert.equal((await t.request('GET', '/v1/auth/whoami', { token: other.session })).status, 200);
    assert.equal((await t.request('GET', '/v1/auth/whoami', { token: second.session })).status, 200);
  });

  it("a legacy xx_treasury_sk_ api key is revoked by its Treasury account's holder, and then refused", async () => {
    const minted = (
      await t.request('POST', '/v1/treasury', {
        token: t.adminToken,
        body: { owner_type: 'org', owner_id: 'legacy-revoke' },
      })
    ).body;
    const other = (
      await t.request('POST', '/v1/treasury', {
        token: t.adminToken,
        body: { owner_type: 'org', owner_id: 'legacy-other' },
      })
    ).body;
    const pat = (
      await t.request('POST', `/v1/treasuries/${minted.id}/pats`, {
        token: minted.api_key,
        body: { label: 'successor' },
      })
    ).body.token;
    assert.equal((await t.request('GET', '/v1/wallets', { token: minted.api_key })).status, 200);
    const crossed = await t.request('POST', `/v1/treasuries/${minted.id}/api-key/revoke`, { token: other.api_key });
    assert.equal(crossed.status, 404);
    const revoked = await t.request('POST', `/v1/treasuries/${minted.id}/api-key/revoke`, { token: pat });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal(revoked.body.treasury_id, minted.id);
    assert.ok(revoked.body.revoked_at);
    const after = await t.request('GET', '/v1/wallets', { token: minted.api_key });
    assert.equal(after.status, 401);
    assert.equal(after.body.error_code, 'invalid_token');
    assert.equal((await t.request('GET', '/v1/wallets', { token: pat })).status, 200, 'the Treasury PAT carries on');
    assert.equal((await t.request('GET', '/v1/wallets', { token: other.api_key })).status, 200);
    const again = await t.request('POST', `/v1/treasuries/${minted.id}/api-key/revoke`, { token: pat });
    assert.equal(again.status, 200, 'idempotent');
    assert.equal(again.body.revoked_at, revoked.body.revoked_at);
    // An agent's Treasury account never had one.
    const agentTreasury = (
      await t.request('POST', '/v1/pats', {
        token: (await signInWithNewKey(t)).session,
        body: { scope_type: 'treasury' },
      })
    ).body;
    const none = await t.request('POST', `/v1/treasuries/${agentTreasury.scope_id}/api-key/revoke`, {
      token: agentTreasury.pat,
    });
    assert.equal(none.status, 404);
    assert.equal(none.body.error_code, 'api_key_not_found');
  });

  it('walks the route catalogue: fresh_sign_in_required exactly where it says owner_session; money-control routes are all marked', async () => {
    const moneyControl = (method: string, path: string) =>
      /\/pats(\/|$)/.test(path) ||
      /\/sessions(\/|$)/.test(path) ||
      /\/api-key(\/|$)/.test(path) ||
      (method !== 'GET' && (/\/policy$/.test(path) || path === '/v1/agents' || /\/payouts\/flush$/.test(path)));
    const admitsSessions = new Set(['session', 'session_or_agent', 'treasury_or_agent', 'any']);
    for (const entry of API_CATALOG) {
      if (moneyControl(entry.method, entry.path)) {
        assert.ok(
          !admitsSessions.has(entry.auth),
          `${entry.method} ${entry.path} controls money but its auth is "${entry.auth}"`,
        );
      }
    }
    const ids: Record<string, string> = {
      id: owner.agent_id,
      pat_id: agentPat.id,
      endpoint_id: 'ep_000000000000000000000000',
      authorization_id: 'au_000000000000000000000000',
    };
    const fresh = await signInWithNewKey(t);
    for (const entry of API_CATALOG) {
      const path = entry.path.replace(/\{([a-z_]+)\}/g, (_m, name: string) => ids[name] ?? 'x');
      const res = await t.request(entry.method, path, {
        token: await exchange(),
        ...(entry.method === 'GET' || entry.method === 'DELETE' ? {} : { body: {} }),
      });
      const gated = res.status === 403 && res.body?.error_code === 'fresh_sign_in_required';
      const ownerOnly = entry.auth === 'owner_session' || entry.auth === 'owner_session_or_service';
      assert.equal(
        gated,
        ownerOnly,
        `${entry.method} ${entry.path} (${entry.auth}) → ${res.status} ${JSON.stringify(res.body)?.slice(0, 120)}`,
      );
      if (ownerOnly && !entry.path.includes('revoke-all') && !entry.path.includes('logout')) {
        const own = await t.request(entry.method, path, {
          token: fresh.session,
          ...(entry.method === 'GET' || entry.method === 'DELETE' ? {} : { body: {} }),
        });
        assert.notEqual(
          own.body?.error_code,
          'fresh_sign_in_required',
          `${entry.method} ${entry.path} with a sign-in session`,
        );
      }
    }
  });
});
