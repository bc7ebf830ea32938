/**
 * Identity and tokens through HTTP with real PostgreSQL and the real signer: SIWE with a viem-signed
 * message, SIWS with an @noble/curves ed25519 key, replay / expiry / domain / signature refusals, sessions,
 * whoami, PAT create / list / revoke / daily cap / single use, exchange-pat, and the removed master keys.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CODES } from '../../../src/shared/error-codes.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;

describe('identity, sessions and PATs (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  const evm = privateKeyToAccount(generatePrivateKey());

  before(async () => {
    t = await startTestTreasury();
  });
  after(async () => {
    await t?.stop();
  });

  async function nonce(): Promise<string> {
    const res = await t.request('POST', '/v1/identity/nonce');
    assert.equal(res.status, 201);
    return res.body.nonce;
  }

  async function siwe(overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {}, signer = evm) {
    const message = createSiweMessage({
      domain: 'treasury.test',
      address: evm.address,
      statement: 'Sign in to Treasury',
      uri: 'http://treasury.test/login',
      version: '1',
      chainId: 84532,
      nonce: await nonce(),
      issuedAt: new Date(),
      expirationTime: new Date(Date.now() + 5 * 60_000),
      ...overrides,
    });
    return { message, signature: await signer.signMessage({ message }), chain: 'evm' as const };
  }

  const whoami = (token: string) => t.request('GET', '/v1/auth/whoami', { token });

  it('SIWE: first sign-in creates the account and an agent, and returns an expiring as_ session', async () => {
    const res = await t.request('POST', '/v1/identity/init', { body: await siwe() });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.match(res.body.session, /^as_[A-Za-z0-9_-]{43}$/);
    assert.match(res.body.account_id, /^acc_[0-9a-f]{24}$/);
    assert.match(res.body.agent_id, /^agt_[0-9a-f]{24}$/);
    assert.ok(new Date(res.body.expires_at).getTime() > Date.now());
    const me = await whoami(res.body.session);
    assert.deepEqual(
      { ...me.body, token_id: undefined },
      {
        auth_type: 'session',
        scope_type: 'account',
        scope_id: res.body.account_id,
        token_id: undefined,
        session_origin: 'sign_in',
        account_id: res.body.account_id,
        agent_id: null,
        parent_token_id: null,
        // Its first agent holds no wallet yet: no owner-signed policy (docs/api.md, Owner-signed policies).
        policy_state: 'ceilings_only',
      },
    );
    const agent = await t.db.knex('agents').where({ id: res.body.agent_id }).first();
    assert.match(agent.treasury_account_id, /^acct_/);

    const again = await t.request('POST', '/v1/identity/init', { body: await siwe() });
    assert.equal(again.status, 200);
    assert.equal(again.body.account_id, res.body.account_id);
    assert.equal(again.body.agent_id, res.body.agent_id);
  });

  it('SIWE: a replayed, expired, foreign-domain or badly signed message is refused', async () => {
    const once = await siwe();
    assert.equal((await t.request('POST', '/v1/identity/init', { body: once })).status, 200);
    const replay = await t.request('POST', '/v1/identity/init', { body: once });
    assert.equal(replay.status, 401);
    assert.equal(replay.body.error_code, 'sign_in_nonce_invalid');

    const expired = await t.request('POST', '/v1/identity/init', {
      body: await siwe({ issuedAt: new Date(Date.now() - 120_000), expirationTime: new Date(Date.now() - 60_000) }),
    });
    assert.equal(expired.body.error_code, 'sign_in_expired');
    const domain = await t.request('POST', '/v1/identity/init', {
      body: await siwe({ domain: 'evil.test', uri: 'http://evil.test/' }),
    });
    assert.equal(domain.body.error_code, 'sign_in_domain_mismatch');
    const uri = await t.request('POST', '/v1/identity/init', { body: await siwe({ uri: 'http://evil.test/' }) });
    assert.equal(uri.body.error_code, 'sign_in_domain_mismatch');
    const chain = await t.request('POST', '/v1/identity/init', { body: await siwe({ chainId: 1 }) });
    assert.equal(chain.body.error_code, 'sign_in_chain_not_supported');
    const forged = await t.request('POST', '/v1/identity/init', {
      body: await siwe({}, privateKeyToAccount(generatePrivateKey())),
    });
    assert.equal(forged.status, 401);
    assert.equal(forged.body.error_code, 'sign_in_signature_invalid');
    const unknownNonce = await siwe({ nonce: 'a1b2c3d4e5f6a7b8c9d0' });
    assert.equal(
      (await t.request('POST', '/v1/identity/init', { body: unknownNonce })).body.error_code,
      'sign_in_nonce_invalid',
    );
    const garbage = await t.request('POST', '/v1/identity/init', {
      body: { message: 'hello', signature: '0x00', chain: 'evm' },
    });
    assert.equal(garbage.body.error_code, 'sign_in_message_invalid');
  });

  it('SIWS: sign-in with an ed25519 key', async () => {
    const secret = ed25519.utils.randomSecretKey();
    const address = base58.encode(ed25519.getPublicKey(secret));
    const message = [
      'treasury.test wants you to sign in with your Solana account:',
      address,
      '',
      'Sign in to Treasury',
      '',
      'URI: http://treasury.test/login',
      'Version: 1',
      'Chain ID: mainnet',
      `Nonce: ${await nonce()}`,
      `Issued At: ${new Date().toISOString()}`,
    ].join('\n');
    const signature = base58.encode(ed25519.sign(new TextEncoder().encode(message), secret));
    const res = await t.request('POST', '/v1/identity/init', {
      body: { message, signature, public_key: address, chain: 'solana' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const identity = await t.db.knex('identities').where({ chain: 'solana', address }).first();
    assert.equal(identity.account_id, res.body.account_id);
    const tampered = await t.request('POST', '/v1/identity/init', {
      body: { message: message.replace('Sign in', 'Sign on'), signature, public_key: address, chain: 'solana' },
    });
    assert.equal(tampered.status, 401);
  });

  it('PATs: create with scopes, list without secrets, change the daily cap, revoke at once', async () => {
    const { session, agent_id } = (await t.request('POST', '/v1/identity/init', { body: await siwe() })).body;
    const created = await t.request('POST', '/v1/pats', {
      token: session,
      body: { scope_type: 'agent', label: 'buyer', daily_cap_usd: '5' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.pat, /^xx_pat_/);
    assert.equal(created.body.scope_id, agent_id);
    assert.equal(created.body.daily_cap_usd, '5');
    const me = await whoami(created.body.pat);
    assert.equal(me.body.auth_type, 'pat');
    assert.equal(me.body.scope_type, 'agent');
    assert.equal(me.body.scope_id, agent_id);

    const listed = await t.request('GET', '/v1/pats', { token: session });
    const entry = listed.body.pats.find((p: { id: string }) => p.id === created.body.id);
    assert.ok(entry);
    assert.equal(entry.pat, undefined);
    assert.ok(!JSON.stringify(listed.body).includes(created.body.pat));

    const patched = await t.request('PATCH', `/v1/pats/${created.body.id}`, {
      token: session,
      body: { daily_cap_usd: '7.5' },
    });
    assert.equal(patched.body.daily_cap_usd, '7.5');

    const stranger = privateKeyToAccount(generatePrivateKey());
    const strangerSession = (
      await t.request('POST', '/v1/identity/init', { body: await siwe({ address: stranger.address }, stranger) })
    ).body.session;
    const foreign = await t.request('DELETE', `/v1/pats/${created.body.id}`, { token: strangerSession });
    assert.equal(foreign.status, 404, "another account cannot revoke this account's PAT");
    assert.equal(foreign.body.error_code, 'pat_not_found');
    assert.equal((await whoami(created.body.pat)).status, 200);

    const revoked = await t.request('DELETE', `/v1/pats/${created.body.id}`, { token: session });
    assert.ok(revoked.body.revoked_at);
    const after = await whoami(created.body.pat);
    assert.equal(after.status, 401);
    assert.equal(after.body.error_code, 'invalid_token');
    assert.equal(after.body.recovery.kind, 'reauthenticate');
  });

  it('a treasury PAT drives the agent Treasury account; an agent PAT exchanges for a session; scopes do not overlap', async () => {
    const { session } = (await t.request('POST', '/v1/identity/init', { body: await siwe() })).body;
    const treasuryPat = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } })).body
      .pat;
    const wallet = await t.request('POST', '/v1/wallets', { token: treasuryPat, body: { label: 'agent wallet' } });
    assert.equal(wallet.status, 201);
    const agentPat = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent' } })).body.pat;
    const exchanged = await t.request('POST', '/v1/identity/exchange-pat', { token: agentPat });
    assert.equal(exchanged.status, 200);
    assert.match(exchanged.body.session, /^as_/);
    const exchangedWho = (await whoami(exchanged.body.session)).body;
    assert.equal(exchangedWho.scope_type, 'agent', "an exchanged session acts as the PAT's agent, not as the account");
    assert.equal(exchangedWho.session_origin, 'pat_exchange');
    const notAgent = await t.request('POST', '/v1/identity/exchange-pat', { token: treasuryPat });
    assert.equal(notAgent.status, 403);
    assert.equal(
      (await t.request('POST', '/v1/wallets', { token: agentPat, body: {} })).status,
      403,
      'an agent PAT cannot create sub-wallets',
    );
    assert.equal(
      (await t.request('POST', '/v1/pats', { token: agentPat, body: { scope_type: 'agent' } })).status,
      403,
      'only a session mints PATs',
    );
    const service = await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'service' } });
    assert.equal(service.body.error_code, 'scope_not_found');
    const capOnTreasury = await t.request('POST', '/v1/pats', {
      token: session,
      body: { scope_type: 'treasury', daily_cap_usd: '1' },
    });
    assert.equal(capOnTreasury.status, 400);
  });

  it("a PAT names the scope asked for when this account holds it, the oldest of its kind without one, and never another account's", async () => {
    const signInAs = async (signer = privateKeyToAccount(generatePrivateKey())) =>
      (await t.request('POST', '/v1/identity/init', { body: await siwe({ address: signer.address }, signer) })).body;
    const [mine, theirs] = [await signInAs(), await signInAs()];
    assert.notEqual(mine.account_id, theirs.account_id);
    const first = (await t.request('GET', '/v1/agents', { token: mine.session })).body.agents[0];
    const second = (await t.request('POST', '/v1/agents', { token: mine.session, body: { label: 'second' } })).body;
    const stranger = (await t.request('GET', '/v1/agents', { token: theirs.session })).body.agents[0];
    const mySeller = (await t.request('POST', '/v1/sellers', { token: mine.session, body: { name: 'Mine Co' } })).body;
    const theirSeller = (await t.request('POST', '/v1/sellers', { token: theirs.session, body: { name: 'Theirs Co' } }))
      .body;
    const mint = (body: Record<string, unknown>) => t.request('POST', '/v1/pats', { token: mine.session, body });
    assert.equal((await mint({ scope_type: 'agent' })).body.scope_id, first.agent_id, 'the oldest agent by default');
    assert.equal((await mint({ scope_type: 'agent', scope_id: second.agent_id })).body.scope_id, second.agent_id);
    assert.equal((await mint({ scope_type: 'treasury' })).body.scope_id, first.treasury_account_id);
    assert.equal(
      (await mint({ scope_type: 'treasury', scope_id: second.treasury_account_id })).body.scope_id,
      second.treasury_account_id,
    );
    assert.equal(
      (await mint({ scope_type: 'service', scope_id: mySeller.seller_id })).body.scope_id,
      mySeller.seller_id,
    );
    for (const body of [
      { scope_type: 'agent', scope_id: stranger.agent_id },
      { scope_type: 'treasury', scope_id: stranger.treasury_account_id },
      { scope_type: 'treasury', scope_id: second.agent_id },
      { scope_type: 'service', scope_id: theirSeller.seller_id },
    ]) {
      const refused = await mint(body);
      assert.equal(refused.body.error_code, 'scope_not_found', JSON.stringify(body));
    }
    const listed = (await t.request('GET', '/v1/pats', { token: mine.session })).body.pats;
    assert.equal(
      listed.length,
      6,
      "the five minted and the seller registration's service PAT; the refused ones minted nothing",
    );
  });

  it('single-use PATs work once; expired sessions answer 401 reauthenticate', async () => {
    const { session, account_id } = (await t.request('POST', '/v1/identity/init', { body: await siwe() })).body;
    const once = (
      await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent', single_use: true } })
    ).body.pat;
    assert.equal((await whoami(once)).status, 200);
    assert.equal((await whoami(once)).status, 401);
    assert.equal((await whoami(session)).status, 200);
    await t.db
      .knex('api_tokens')
      .where({ kind: 'session', account_id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    // A change made outside this process (another replica, or the clock) shows once the bearer lookup
    // cache (TREASURY_AUTH_CACHE_MS, 1 s by default) has let the entry go.
    await new Promise((r) => setTimeout(r, 1_100));
    const expired = await whoami(session);
    assert.equal(expired.status, 401);
    assert.equal(expired.body.recovery.kind, 'reauthenticate');
  });

  it('hostile values on identity and PAT routes answer 4xx with a stable code and create nothing', async () => {
    const { session } = (await t.request('POST', '/v1/identity/init', { body: await siwe() })).body;
    const count = async () =>
      Number((await t.db.knex('api_tokens').count({ n: '*' }))[0]!.n) +
      Number((await t.db.knex('accounts').count({ n: '*' }))[0]!.n);
    const before = await count();
    const refused = async (method: string, route: string, body: unknown, token?: string) => {
      const res = await t.request(method, route, { ...(token ? { token } : {}), body });
      assert.ok(
        res.status >= 400 && res.status < 500 && res.body.error_code in ERROR_CODES,
        `${method} ${route} ${String(JSON.stringify(body)).slice(0, 60)} → ${res.status}`,
      );
    };
    const valid = await siwe();
    for (const value of hostile.any!) {
      for (const field of ['message', 'signature', 'chain'])
        await refused('POST', '/v1/identity/init', { ...valid, [field]: value });
      for (const field of ['scope_type', 'scope_id', 'label', 'daily_cap_usd', 'single_use', 'expires_in_seconds']) {
        if (field === 'single_use' && typeof value === 'boolean') continue;
        await refused('POST', '/v1/pats', { scope_type: 'agent', [field]: value }, session);
      }
    }
    for (const value of hostile.usd_amount!)
      await refused('POST', '/v1/pats', { scope_type: 'agent', daily_cap_usd: value }, session);
    for (const raw of hostile.raw_bodies as string[]) {
      const res = await t.request('POST', '/v1/pats', { token: session, rawBody: raw });
      assert.ok(res.status >= 400 && res.status < 500, raw);
    }
    for (const id of hostile.identifier as string[])
      await refused('DELETE', `/v1/pats/${encodeURIComponent(id)}`, undefined, session);
    assert.equal(await count(), before);
  });

  it('platform routes refuse removed master keys with the remedy; Treasury routes still take the api key', async () => {
    const minted = (
      await t.request('POST', '/v1/treasury', { token: t.adminToken, body: { owner_type: 'org', owner_id: 'legacy' } })
    ).body;
    for (const [method, route] of [
      ['GET', '/v1/auth/whoami'],
      ['GET', '/v1/pats'],
      ['POST', '/v1/identity/exchange-pat'],
    ] as const) {
      for (const key of [minted.api_key, 'xx_live_sk_abc']) {
        const res = await t.request(method, route, { token: key });
        assert.equal(res.status, 401, `${method} ${route}`);
        assert.equal(res.body.error_code, 'master_key_removed');
        assert.match(res.body.user_message, /xx init/);
        assert.match(res.body.user_message, /service pat create/);
      }
    }
    assert.equal((await t.request('GET', '/v1/wallets', { token: minted.api_key })).status, 200);
  });
});
