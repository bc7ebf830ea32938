/**
 * Treasury accounts and tokens through HTTP, with a real signer on SoftHSM and real PostgreSQL:
 * who may mint, what is returned once, what is stored (hashes only), and how bad bearers are refused.
 */
import assert from 'node:assert/strict';
import { hashToken } from '../../../src/api/auth/token-codec.js';
import { useTestTreasury } from '../../support/api-harness.js';

describe('treasury accounts and PATs (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();

  it('mints an account with the operator token and shows the api key once, stored only hashed', async () => {
    const res = await t.request('POST', '/v1/treasury', {
      token: t.adminToken,
      body: { owner_type: 'agent', owner_id: 'agent-1' },
    });
    assert.equal(res.status, 201);
    assert.match(res.body.id, /^acct_[0-9a-f]{24}$/);
    assert.match(res.body.api_key, /^xx_treasury_sk_[A-Za-z0-9_-]{43}$/);
    assert.equal(res.body.owner_type, 'agent');
    const tokens = await t.db.knex('api_tokens').where({ scope_id: res.body.id });
    assert.equal(tokens.length, 1);
    assert.equal(tokens[0].token_hash, hashToken(res.body.api_key));
    const dump = JSON.stringify(await t.db.knex('api_tokens'));
    assert.ok(!dump.includes(res.body.api_key), 'the raw api key must not be stored');
    const account = await t.db.knex('treasury_accounts').where({ id: res.body.id }).first();
    assert.match(account.account_key_ref, /^[A-Za-z0-9:._-]+$/);
    assert.equal(res.body.account_key_ref, undefined, 'key references never leave the API');
  });

  it('refuses to mint without the operator token', async () => {
    const anon = await t.request('POST', '/v1/treasury', { body: { owner_type: 'agent', owner_id: 'x' } });
    assert.equal(anon.status, 401);
    assert.equal(anon.body.error_code, 'unauthorized');
    assert.equal(anon.body.recovery.kind, 'reauthenticate');
    const minted = await t.request('POST', '/v1/treasury', {
      token: t.adminToken,
      body: { owner_type: 'agent', owner_id: 'y' },
    });
    const withApiKey = await t.request('POST', '/v1/treasury', {
      token: minted.body.api_key,
      body: { owner_type: 'agent', owner_id: 'z' },
    });
    assert.equal(withApiKey.status, 403);
    assert.equal(withApiKey.body.error_code, 'insufficient_scope');
    const wrong = await t.request('POST', '/v1/treasury', {
      token: t.adminToken + 'x',
      body: { owner_type: 'agent', owner_id: 'z' },
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error_code, 'invalid_token');
  });

  it('issues Treasury-scoped PATs that work on wallet routes of that account only', async () => {
    const a = await t.request('POST', '/v1/treasury', {
      token: t.adminToken,
      body: { owner_type: 'org', owner_id: 'a' },
    });
    const b = await t.request('POST', '/v1/treasury', {
      token: t.adminToken,
      body: { owner_type: 'org', owner_id: 'b' },
    });
    const pat = await t.request('POST', `/v1/treasuries/${a.body.id}/pats`, {
      token: a.body.api_key,
      body: { label: 'ci' },
    });
    assert.equal(pat.status, 201);
    assert.match(pat.body.token, /^xx_pat_[A-Za-z0-9_-]{43}$/);
    assert.equal(pat.body.scope_type, 'treasury');
    assert.equal(pat.body.scope_id, a.body.id);
    const stored = await t.db.knex('api_tokens').where({ id: pat.body.id }).first();
    assert.equal(stored.token_hash, hashToken(pat.body.token));
    assert.equal(stored.kind, 'pat');

    const crossed = await t.request('POST', `/v1/treasuries/${b.body.id}/pats`, { token: a.body.api_key, body: {} });
    assert.equal(crossed.status, 404);
    assert.equal(crossed.body.error_code, 'account_not_found');
    // A Treasury PAT mints no Treasury PAT, on its own account or another (docs/security-model.md).
    for (const id of [a.body.id, b.body.id]) {
      const byPat = await t.request('POST', `/v1/treasuries/${id}/pats`, { token: pat.body.token, body: {} });
      assert.equal(byPat.status, 403);
      assert.equal(byPat.body.error_code, 'insufficient_scope');
    }

    const wallet = await t.request('POST', '/v1/wallets', { token: pat.body.token, body: { label: 'w' } });
    assert.equal(wallet.status, 201);
    const otherRead = await t.request('GET', `/v1/wallets/${wallet.body.id}`, { token: b.body.api_key });
    assert.equal(otherRead.status, 404);
    assert.equal(otherRead.body.error_code, 'wallet_not_found');
  });

  it('refuses removed master keys, unknown and expired tokens with 401 and the reauthenticate recovery', async () => {
    const removed = await t.request('GET', '/v1/wallets', { token: 'xx_live_sk_abc' });
    assert.equal(removed.status, 401);
    assert.equal(removed.body.error_code, 'master_key_removed');
    assert.match(removed.body.user_message, /xx init/);
    for (const token of ['xx_pat_unknown', 'xx_treasury_sk_nope', 'as_nope', 'garbage']) {
      const res = await t.request('GET', '/v1/wallets', { token });
      assert.equal(res.status, 401, token);
      assert.equal(res.body.error_code, 'invalid_token');
      assert.deepEqual(res.body.recovery, {
        kind: 'reauthenticate',
        cli_command: 'xx init',
        login_command: 'xx login --token -',
      });
    }
    const a = await t.request('POST', '/v1/treasury', {
      token: t.adminToken,
      body: { owner_type: 'org', owner_id: 'exp' },
    });
    const pat = await t.request('POST', `/v1/treasuries/${a.body.id}/pats`, {
      token: a.body.api_key,
      body: { expires_in_seconds: 60 },
    });
    await t.db
      .knex('api_tokens')
      .where({ id: pat.body.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const expired = await t.request('GET', '/v1/wallets', { token: pat.body.token });
    assert.equal(expired.status, 401);
    assert.equal(expired.body.error_code, 'invalid_token');
  });

  it('writes every error as {error_code, user_message, request_id}', async () => {
    const res = await t.request('GET', '/v1/nope', { headers: { 'x-request-id': 'trace-123' } });
    assert.equal(res.status, 404);
    assert.deepEqual(Object.keys(res.body).sort(), ['error_code', 'request_id', 'user_message']);
    assert.equal(res.body.request_id, 'trace-123');
    assert.equal(res.headers.get('x-request-id'), 'trace-123');
  });

  it('serves Prometheus metrics and readiness', async () => {
    const ready = await t.request('GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.signer, true);
    const metrics = await t.request('GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.body, /treasury_http_requests_total\{method="POST",route="\/v1\/treasury",status="201"\} \d+/);
    assert.match(metrics.body, /treasury_signer_calls_total\{method="create_account_key",outcome="ok"\} \d+/);
    assert.match(metrics.body, /treasury_accounts_minted_total \d+/);
  });
});
