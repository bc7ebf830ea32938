/**
 * What the OpenAPI document promises is what the API answers: real replies (HTTP, PostgreSQL, SoftHSM signer)
 * of the routes the document describes are each matched to their catalogue operation and parsed with the
 * schema the document was derived from — a success with the reply schema of its status, an error with the
 * error envelope, its `error_code` one the operation lists under that status. A status or code the document
 * does not list for the operation fails, and so does a reply that parsing changes (a key the schema does not
 * know; the loose schemas excepted). The shared response schemas of the seller and identity routes are also
 * checked field by field in ./api-responses.test.ts; this suite covers the rest and the error replies.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { API_CATALOG, type CatalogEntry } from '../../../src/api/api-catalog.js';
import { errorCodesByStatus } from '../../../src/api/http/openapi/openapi-errors.js';
import { securityOf } from '../../../src/api/http/openapi/openapi-security.js';
import { errorBodySchema } from '../../../src/shared/api-responses/error-responses.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';

/** The catalogue operation serving `method path` (a `{param}` segment matches any one segment). */
function operationOf(method: string, path: string): CatalogEntry {
  const segments = path.split('?')[0]!.split('/');
  const found = API_CATALOG.find((e) => {
    const template = e.path.split('/');
    return (
      e.method === method &&
      template.length === segments.length &&
      template.every((s, i) => (s.startsWith('{') ? segments[i] !== '' : s === segments[i]))
    );
  });
  assert.ok(found, `${method} ${path}: no operation in the catalogue`);
  return found;
}

/** The reply is one the operation documents: its status listed, its body parsed unchanged by the schema. */
function assertDocumented(entry: CatalogEntry, res: { status: number; body: unknown }): void {
  const what = `${entry.operationId} (${entry.method} ${entry.path}) → ${res.status}`;
  const reply = entry.replies[res.status as keyof CatalogEntry['replies']];
  if (reply !== undefined) {
    if (reply === null) return assert.equal(res.body, undefined, `${what}: a 204 has no body`);
    if (!(reply instanceof z.ZodType)) return assert.equal(typeof res.body, 'string', what);
    const parsed = reply.safeParse(res.body);
    assert.ok(parsed.success, `${what}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues[0])}`);
    assert.deepEqual(parsed.data, res.body, `${what}: a key the schema does not know`);
    return;
  }
  const codes = errorCodesByStatus(entry).get(res.status);
  assert.ok(codes, `${what}: status not documented (${JSON.stringify(res.body)})`);
  const parsed = errorBodySchema.safeParse(res.body);
  assert.ok(parsed.success, `${what}: not the error envelope ${JSON.stringify(res.body)}`);
  assert.ok(codes.includes(parsed.data.error_code), `${what}: ${parsed.data.error_code} not in ${codes.join(', ')}`);
}

describe('OpenAPI replies: real answers match the document (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  const seen = new Map<string, Set<number>>();

  /** A request whose reply must be documented; returns it. */
  async function call(method: string, path: string, opts: Parameters<TestTreasury['request']>[2] = {}) {
    const res = await t.request(method, path, opts);
    const entry = operationOf(method, path);
    assertDocumented(entry, res);
    seen.set(entry.operationId, (seen.get(entry.operationId) ?? new Set()).add(res.status));
    return res;
  }

  before(async () => {
    t = await startTestTreasury();
  });
  after(async () => {
    await t?.stop();
  });

  it('operations, treasury accounts, wallets, policy, pay, transfer and their refusals', async () => {
    for (const path of ['/livez', '/health', '/readyz', '/metrics', '/v1/openapi.json']) await call('GET', path);
    await call('POST', '/v1/treasury', { body: { owner_type: 'agent', owner_id: 'doc' } }); // 401
    const minted = await call('POST', '/v1/treasury', {
      token: t.adminToken,
      body: { owner_type: 'agent', owner_id: 'doc' },
    });
    assert.equal(minted.status, 201);
    const key = minted.body.api_key as string;
    const account = minted.body.id as string;
    const pat = await call('POST', `/v1/treasuries/${account}/pats`, { token: key, body: { label: 'doc' } });
    assert.equal(pat.status, 201);
    const token = pat.body.token as string;
    const byOperator = await call('POST', `/v1/treasuries/${account}/pats`, { token: t.adminToken, body: {} });
    assert.equal(byOperator.status, 201, 'the operator token is one of the bearers the document lists');
    await call('POST', '/v1/wallets', { token, body: { chain: 'no-such-chain' } }); // 400 chain_not_supported
    await call('POST', '/v1/wallets', { token, rawBody: '{', headers: { 'content-type': 'application/json' } });
    const created = await call('POST', '/v1/wallets', { token, body: { label: 'main' } });
    assert.equal(created.status, 201);
    const wallet = `/v1/wallets/${created.body.id as string}`;
    await call('GET', '/v1/wallets', { token });
    await call('GET', wallet, { token });
    await call('GET', '/v1/wallets/wal_doesnotexist', { token }); // 404
    await call('GET', '/v1/wallets/not-an-id', { token }); // 400 invalid_path_parameter
    await call('GET', `${wallet}/balance`, { token }); // no RPC here: 503 chain_unavailable (documented)
    await call('PUT', `${wallet}/policy`, { token, body: { per_tx_cap_usd: '0.05', daily_cap_usd: '1' } });
    await call('GET', `${wallet}/policy`, { token });
    const dry = await call('POST', `${wallet}/policy/evaluate`, {
      token,
      body: { kind: 'pay', to: paymentRequirements().payTo, amount_usd: '0.5' },
    });
    assert.equal(dry.body.allowed, false);

    const requirements = paymentRequirements({ amount: '10000', maxTimeoutSeconds: 300 });
    const headers = { 'idempotency-key': `doc-${randomBytes(6).toString('hex')}` };
    const paid = await call('POST', `${wallet}/pay`, { token, body: { payment_requirements: requirements }, headers });
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    const replayed = await call('POST', `${wallet}/pay`, {
      token,
      body: { payment_requirements: requirements },
      headers,
    });
    assert.equal(replayed.body.authorization_id, paid.body.authorization_id);
    const conflict = await call('POST', `${wallet}/pay`, {
      token,
      body: { payment_requirements: { ...requirements, amount: '20000' } },
      headers,
    });
    assert.equal(conflict.body.error_code, 'idempotency_key_conflict');
    await call('POST', `${wallet}/pay`, {
      token,
      body: { payment_requirements: requirements },
      headers: { 'idempotency-key': 'not valid!' },
    }); // 400 invalid_idempotency_key
    const denied = await call('POST', `${wallet}/pay`, {
      token,
      body: { payment_requirements: paymentRequirements({ amount: '900000' }) },
    });
    assert.equal(denied.body.error_code, 'policy_denied');
    await call('POST', `${wallet}/transfer`, {
      token,
      body: { to: paymentRequirements().payTo, amount_usd: '0.01' },
    });
    await call('POST', `${wallet}/authorizations/auth_doesnotexist/settlement`, {
      token,
      body: { transaction: `0x${'ab'.repeat(32)}` },
    }); // 404 authorization_not_found
    await call('POST', `${wallet}/rotate`, { token, body: { abandon_balance: true } });
    await call('POST', `${wallet}/revoke`, { token, body: { abandon_balance: true } });
    await call('GET', wallet, { token }); // 410 wallet_revoked
    await call('POST', `/v1/treasuries/${account}/api-key/revoke`, { token: key });
    await call('POST', `/v1/treasuries/${account}/api-key/revoke`, { token }); // 404 api_key_not_found
    await call('POST', `/v1/treasuries/${account}/credentials/revoke`, { token }); // 403 insufficient_scope
    const ended = await call('POST', `/v1/treasuries/${account}/credentials/revoke`, { token: t.adminToken });
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
  });

  it('identity, sessions, agents, PATs and the ledger reports', async () => {
    await call('POST', '/v1/identity/nonce');
    const me = await signInWithNewKey(t);
    await call('GET', '/v1/auth/whoami', { token: me.session });
    await call('GET', '/v1/agents', { token: me.session });
    await call('POST', '/v1/agents', { token: me.session });
    await call('GET', '/v1/agents/agt_000000000000000000000000', { token: me.session }); // 404
    await call('POST', `/v1/agents/${me.agent_id}/wallets`, { token: me.session });
    const agentPat = await call('POST', '/v1/pats', {
      token: me.session,
      body: { scope_type: 'agent', scope_id: me.agent_id },
    });
    const exchanged = await call('POST', '/v1/identity/exchange-pat', { token: agentPat.body.pat });
    await call('POST', '/v1/pats', {
      token: exchanged.body.session,
      body: { scope_type: 'agent', scope_id: me.agent_id },
    }); // 403 fresh_sign_in_required
    await call('PATCH', `/v1/pats/${agentPat.body.id as string}`, { token: me.session, body: { daily_cap_usd: '3' } });
    await call('DELETE', `/v1/pats/${agentPat.body.id as string}`, { token: me.session });
    await call('DELETE', '/v1/pats/pat_000000000000000000000000', { token: me.session }); // 404

    const seller = await call('POST', '/v1/sellers', { token: me.session, body: { name: 'Doc Shop' } });
    const svc = { token: seller.body.pat as string };
    const endpoint = await call('POST', `/v1/sellers/${seller.body.seller_id as string}/endpoints`, {
      ...svc,
      body: { path: '/doc', price: '0.01' },
    });
    const row = {
      tx_hash: `0x${randomBytes(32).toString('hex')}`,
      payer: `0x${randomBytes(20).toString('hex')}`,
      amount: '10000',
      network: 'eip155:84532',
      endpoint_id: endpoint.body.endpoint_id,
    };
    assert.equal((await call('POST', '/v1/ledger', { ...svc, body: row })).status, 201);
    assert.equal((await call('POST', '/v1/ledger', { ...svc, body: row })).status, 200);
    await call('POST', '/v1/ledger/batch', {
      ...svc,
      body: {
        rows: [
          row,
          { ...row, tx_hash: `0x${randomBytes(32).toString('hex')}`, endpoint_id: 'ep_000000000000000000000000' },
        ],
      },
    });
    await call('GET', '/v1/ledger/export?format=csv', svc);
    await call(
      'DELETE',
      `/v1/sellers/${seller.body.seller_id as string}/endpoints/${endpoint.body.endpoint_id as string}`,
      svc,
    ); // 409 endpoint_has_ledger
    await call('POST', '/v1/auth/sessions/revoke-all', { token: me.session });
    await call('POST', '/v1/auth/logout', { token: me.session }); // 401: the session ended
  });

  it('the public catalogue: its pages and its refusals', async () => {
    await call('GET', '/discovery/resources?limit=5&offset=0');
    await call('GET', '/discovery/search?query=weather&limit=5');
    await call('GET', '/discovery/resources?limit=0'); // 400 discovery_page_out_of_range
    await call('GET', '/discovery/search?query=%00'); // 400 discovery_query_invalid
    await call('GET', '/v1/sandbox/faucets'); // 404 not_found: this API is no sandbox
  });

  it('asks for a bearer exactly where the document lists bearer schemes', async () => {
    const ids: Record<string, string> = {
      id: 'x_000000000000000000000000',
      asset: 'init.js',
      pat_id: 'pat_000000000000000000000000',
      endpoint_id: 'ep_000000000000000000000000',
      authorization_id: 'auth_000000000000000000000000',
    };
    for (const entry of API_CATALOG) {
      // The export validates its query (format=csv) before the bearer.
      const query = entry.operationId === 'exportLedgerCsv' ? '?format=csv' : '';
      const path = entry.path.replace(/\{([a-z_]+)\}/g, (_m, name: string) => ids[name] ?? 'x') + query;
      const res = await call(
        entry.method,
        path,
        entry.method === 'GET' || entry.method === 'DELETE' ? {} : { body: {} },
      );
      const refused = res.status === 401 && res.body?.error_code === 'unauthorized';
      assert.equal(refused, securityOf(entry.auth).length > 0, `${entry.operationId} without a bearer → ${res.status}`);
    }
  });

  it('covered every operation the API answers money or identity with', () => {
    const expected = [
      'mintTreasury',
      'issueTreasuryPat',
      'revokeTreasuryApiKey',
      'revokeTreasuryCredentials',
      'createWallet',
      'getWalletBalance',
      'putWalletPolicy',
      'evaluateWalletPolicy',
      'payFromWallet',
      'transferFromWallet',
      'recordUptoSettlement',
      'rotateWallet',
      'revokeWallet',
      'issueSignInNonce',
      'exchangePatForSession',
      'reportLedgerRow',
      'reportLedgerBatch',
      'exportLedgerCsv',
      'revokeAllSessions',
      'logout',
      'listDiscoveryResources',
      'searchDiscoveryResources',
    ];
    assert.deepEqual(
      expected.filter((op) => !seen.has(op)),
      [],
    );
  });
});
