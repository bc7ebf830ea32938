/**
 * Error codes of src/shared/error-codes.ts that no other suite produces, each produced here through HTTP and
 * checked for its status and body: malformed_json, method_not_allowed, agent_not_found, seller_not_found,
 * slug_taken, banking_not_declared, openapi_url_not_configured, origin_not_configured, not_ready and
 * admin_token_not_configured (a Treasury started without TREASURY_ADMIN_TOKEN). settlement_override_invalid
 * (the seller middleware's) is produced in test/e2e/upto-payments.test.ts;
 * test/unit/architecture/error-code-tests.test.ts fails when a code is named by no test.
 */
import assert from 'node:assert/strict';
import { ERROR_CODES, type ErrorCode } from '../../../src/shared/error-codes.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

function assertError(res: { status: number; body: any }, code: ErrorCode, what: string): void {
  assert.equal(res.status, ERROR_CODES[code].status, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(res.body?.error_code, code, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal(typeof res.body.user_message, 'string', what);
}

describe('error codes through HTTP (PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();
  let session: string;
  before(async () => {
    ({ session } = await signInWithNewKey(t));
  });

  it('malformed_json: a body that is not JSON', async () => {
    const res = await t.request('POST', '/v1/sellers', { token: session, rawBody: '{"name": "Half' });
    assertError(res, 'malformed_json', 'truncated JSON');
  });

  it('method_not_allowed: a method the path does not serve', async () => {
    const res = await t.request('DELETE', '/v1/sellers', { token: session });
    assertError(res, 'method_not_allowed', 'DELETE /v1/sellers');
    assert.match(res.headers.get('allow') ?? '', /GET/);
  });

  it('agent_not_found and seller_not_found: well-formed ids nobody holds', async () => {
    assertError(
      await t.request('GET', `/v1/agents/agt_${'0'.repeat(24)}`, { token: session }),
      'agent_not_found',
      'unknown agent',
    );
    assertError(
      await t.request('GET', `/v1/sellers/sel_${'0'.repeat(24)}`, { token: session }),
      'seller_not_found',
      'unknown seller',
    );
    // Another account's seller is as absent as a missing one.
    const other = await signInWithNewKey(t);
    const theirs = await t.request('POST', '/v1/sellers', { token: other.session, body: { name: 'Not Yours' } });
    assert.equal(theirs.status, 201, JSON.stringify(theirs.body));
    assertError(
      await t.request('GET', `/v1/sellers/${theirs.body.seller_id}`, { token: session }),
      'seller_not_found',
      "another account's seller",
    );
  });

  it('slug_taken: a second service under a slug already registered', async () => {
    const first = await t.request('POST', '/v1/sellers', {
      token: session,
      body: { name: 'Weather', slug: 'weather-x' },
    });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const second = await t.request('POST', '/v1/sellers', {
      token: session,
      body: { name: 'Weather Again', slug: 'weather-x' },
    });
    assertError(second, 'slug_taken', 'same slug');
    assert.equal(second.body.slug, 'weather-x');
  });

  it('openapi_url_not_configured, origin_not_configured and banking_not_declared on a bare service', async () => {
    const seller = await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Bare Co' } });
    assert.equal(seller.status, 201, JSON.stringify(seller.body));
    const id = seller.body.seller_id as string;
    assertError(
      await t.request('POST', `/v1/sellers/${id}/refresh`, { token: seller.body.pat }),
      'openapi_url_not_configured',
      'refresh without an OpenAPI URL',
    );
    assertError(
      await t.request('POST', `/v1/sellers/${id}/verify`, { token: seller.body.pat }),
      'origin_not_configured',
      'verify without an origin',
    );
    assertError(
      await t.request('POST', `/v1/sellers/${id}/banking/verify`, { token: t.adminToken }),
      'banking_not_declared',
      'the operator verifies banking never declared',
    );
    assert.equal((await t.request('GET', `/v1/sellers/${id}/banking`, { token: session })).body.state, 'none');
  });
});

describe('error codes of a Treasury without an operator token, and of one not ready', function () {
  this.timeout(120_000);
  const t = useTestTreasury({ withoutAdminToken: true });

  it('admin_token_not_configured: minting an account needs the operator token the server does not have', async () => {
    for (const token of [t.adminToken, undefined]) {
      const res = await t.request('POST', '/v1/treasury', {
        ...(token ? { token } : {}),
        body: { owner_type: 'agent', owner_id: 'nobody' },
      });
      assertError(res, 'admin_token_not_configured', token ? 'with a bearer' : 'without a bearer');
    }
    assert.equal((await t.db.knex('treasury_accounts').count({ n: '*' }))[0]!.n, '0');
  });

  it('not_ready: /readyz answers 503 with the code once the signer is gone', async () => {
    const ready = await t.request('GET', '/readyz');
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.equal(ready.body.error_code, undefined);
    await t.signer.stop();
    const res = await t.request('GET', '/readyz');
    assertError(res, 'not_ready', 'signer stopped');
    assert.deepEqual([res.body.status, res.body.signer, res.body.database], ['not_ready', false, true]);
  });
});
