/**
 * Every reply the `xx` CLI and the buyer SDK parse with a schema of src/shared/api-responses/ has exactly
 * that shape when it comes from the real API (HTTP, PostgreSQL, SoftHSM signer): each body is parsed with the
 * schema its operation's catalogue entry names for its status (src/api/http/openapi/, the schemas of
 * src/shared/api-responses/) and must come out unchanged — a key the schema does not know (nested ones
 * included, which parsing strips), a missing key or a value of another type fails. The compiler keeps the
 * API's views typed with the same schemas; this keeps what reaches the wire (spreads, database values) honest
 * too.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { z } from 'zod';
import { API_CATALOG } from '../../../src/api/api-catalog.js';
import { sessionGrantSchema } from '../../../src/shared/api-responses/identity-responses.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

/**
 * The reply succeeded, and parsing it with the schema the catalogue names for the operation and the reply's
 * status changes nothing; returns the parsed body.
 */
function conforms(operationId: string, res: { status: number; body: any }, what: string): any {
  const entry = API_CATALOG.find((e) => e.operationId === operationId);
  assert.ok(entry, `${operationId}: not in the catalogue`);
  assert.ok(res.status >= 200 && res.status < 300, `${what}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  const schema = entry.replies[res.status as keyof typeof entry.replies];
  assert.ok(schema instanceof z.ZodType, `${what}: no JSON reply schema for HTTP ${res.status}`);
  const parsed = schema.safeParse(res.body);
  assert.ok(parsed.success, `${what}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues[0])}`);
  assert.deepEqual(parsed.data, res.body, `${what}: a key the schema does not know`);
  return parsed.data;
}

describe('API replies match the shared response schemas (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  let origin: http.Server;
  let originUrl: string;
  let wellKnown = '';

  before(async () => {
    t = await startTestTreasury();
    origin = http.createServer((req, res) => {
      if (req.url === '/.well-known/xx-verification.txt')
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end(wellKnown);
      if (req.url === '/openapi.json') {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            openapi: '3.1.0',
            paths: { '/search': { get: { operationId: 'search', 'x-price-usd': '0.05' } } },
          }),
        );
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
    originUrl = `http://127.0.0.1:${(origin.address() as { port: number }).port}`;
  });
  after(async () => {
    origin?.close();
    await t?.stop();
  });

  it('identity, whoami and PATs', async () => {
    conforms('issueSignInNonce', await t.request('POST', '/v1/identity/nonce'), 'POST /v1/identity/nonce');
    const me = sessionGrantSchema.parse(await signInWithNewKey(t));
    conforms('whoami', await t.request('GET', '/v1/auth/whoami', { token: me.session }), 'whoami (session)');
    const pat = conforms(
      'createPat',
      await t.request('POST', '/v1/pats', {
        token: me.session,
        body: { scope_type: 'agent', scope_id: me.agent_id, label: 'cap', daily_cap_usd: '2.5' },
      }),
      'POST /v1/pats',
    );
    conforms('whoami', await t.request('GET', '/v1/auth/whoami', { token: pat.pat }), 'whoami (PAT)');
    conforms(
      'exchangePatForSession',
      await t.request('POST', '/v1/identity/exchange-pat', { token: pat.pat }),
      'POST /v1/identity/exchange-pat',
    );
    conforms('listPats', await t.request('GET', '/v1/pats', { token: me.session }), 'GET /v1/pats');
    conforms(
      'updatePatDailyCap',
      await t.request('PATCH', `/v1/pats/${pat.id}`, { token: me.session, body: { daily_cap_usd: null } }),
      'PATCH /v1/pats/{id}',
    );
    conforms(
      'revokePat',
      await t.request('DELETE', `/v1/pats/${pat.id}`, { token: me.session }),
      'DELETE /v1/pats/{id}',
    );
  });

  it('agents and wallets', async () => {
    const me = await signInWithNewKey(t);
    conforms(
      'createAgentWallet',
      await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, {
        token: me.session,
        body: { label: 'main', policy: { per_tx_cap_usd: '0.5' } },
      }),
      'POST /v1/agents/{id}/wallets',
    );
    const agent = conforms(
      'getAgent',
      await t.request('GET', `/v1/agents/${me.agent_id}`, { token: me.session }),
      'GET /v1/agents/{id}',
    );
    assert.equal(agent.wallets.length, 1);
    conforms(
      'spawnAgent',
      await t.request('POST', '/v1/agents', { token: me.session, body: { label: 'second' } }),
      'POST /v1/agents',
    );
    conforms('listAgents', await t.request('GET', '/v1/agents', { token: me.session }), 'GET /v1/agents');
    const pat = (
      await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'agent', scope_id: me.agent_id } })
    ).body.pat as string;
    conforms('listWallets', await t.request('GET', '/v1/wallets', { token: pat }), 'GET /v1/wallets');
    conforms(
      'getWallet',
      await t.request('GET', `/v1/wallets/${agent.wallets[0]!.id}`, { token: pat }),
      'GET /v1/wallets/{id}',
    );
  });

  it('sellers, endpoints, origin verification, refresh, ledger, revenue, payouts and pay-to', async () => {
    const me = await signInWithNewKey(t);
    const created = conforms(
      'createSeller',
      await t.request('POST', '/v1/sellers', {
        token: me.session,
        body: {
          name: 'Shapes Co',
          origin: originUrl,
          openapi_url: `${originUrl}/openapi.json`,
          legal_entity: 'Shapes Ltd',
          country: 'GB',
        },
      }),
      'POST /v1/sellers',
    );
    assert.ok(created.ingest && 'added' in created.ingest, 'the ingest report');
    const seller = `/v1/sellers/${created.seller_id}`;
    const svc = { token: created.pat };
    conforms('whoami', await t.request('GET', '/v1/auth/whoami', svc), 'whoami (service PAT)');
    conforms('getSeller', await t.request('GET', seller, svc), 'GET /v1/sellers/{id}');
    conforms(
      'updateSeller',
      await t.request('PATCH', seller, { ...svc, body: { payout_mode: 'platform_mor' } }),
      'PATCH /v1/sellers/{id}',
    );
    conforms('listSellers', await t.request('GET', '/v1/sellers', { token: me.session }), 'GET /v1/sellers');
    conforms('getSellerBanking', await t.request('GET', `${seller}/banking`, svc), 'GET banking');
    conforms(
      'putSellerBanking',
      await t.request('PUT', `${seller}/banking`, { ...svc, body: { legal_entity: 'Shapes GmbH', country: 'DE' } }),
      'PUT banking',
    );
    const instructions = conforms(
      'getSellerOriginVerification',
      await t.request('GET', `${seller}/verify`, svc),
      'GET verify',
    );
    wellKnown = `${instructions.token}\n`;
    conforms('verifySellerOrigin', await t.request('POST', `${seller}/verify`, svc), 'POST verify');
    conforms('refreshSellerOpenApi', await t.request('POST', `${seller}/refresh`, svc), 'POST refresh');
    const endpoint = conforms(
      'createSellerEndpoint',
      await t.request('POST', `${seller}/endpoints`, {
        ...svc,
        body: { path: '/items', path_pattern: '/items/{id}', price: '0.01', route_prices: { '/items/free': '0' } },
      }),
      'POST endpoints',
    );
    conforms(
      'updateSellerEndpoint',
      await t.request('PATCH', `${seller}/endpoints/${endpoint.endpoint_id}`, { ...svc, body: { price: '0.02' } }),
      'PATCH endpoint',
    );
    conforms('listSellerEndpoints', await t.request('GET', `${seller}/endpoints`, svc), 'GET endpoints');
    conforms('verifyServicePat', await t.request('POST', '/v1/auth/verify', svc), 'POST /v1/auth/verify');
    conforms('suspendSeller', await t.request('POST', `${seller}/suspend`, svc), 'suspend');
    conforms('resumeSeller', await t.request('POST', `${seller}/resume`, svc), 'resume');

    const report = await t.request('POST', '/v1/ledger', {
      ...svc,
      body: {
        tx_hash: `0x${randomBytes(32).toString('hex')}`,
        payer: `0x${randomBytes(20).toString('hex')}`,
        amount: '20000',
        network: 'eip155:84532',
        endpoint_id: endpoint.endpoint_id,
      },
    });
    assert.equal(report.status, 201, JSON.stringify(report.body));
    const ledger = conforms('listLedgerRows', await t.request('GET', '/v1/ledger', svc), 'GET /v1/ledger');
    assert.equal(ledger.entries.length, 1);
    conforms('getLedgerRevenue', await t.request('GET', '/v1/ledger/revenue', svc), 'GET /v1/ledger/revenue');
    conforms('listSellerPayouts', await t.request('GET', `${seller}/payouts`, svc), 'GET payouts');
    conforms(
      'flushSellerPayouts',
      await t.request('POST', `${seller}/payouts/flush`, { token: me.session }),
      'POST payouts/flush',
    );
    conforms('listSellerPayTo', await t.request('GET', `${seller}/pay-to`, svc), 'GET pay-to');
    const servicePat = conforms(
      'createServicePat',
      await t.request('POST', `${seller}/pats`, { token: me.session, body: { label: 'middleware' } }),
      'POST seller pats',
    );
    conforms('listServicePats', await t.request('GET', `${seller}/pats`, { token: me.session }), 'GET seller pats');
    conforms(
      'revokeServicePat',
      await t.request('DELETE', `${seller}/pats/${servicePat.id}`, { token: me.session }),
      'DELETE seller pat',
    );
  });
});
