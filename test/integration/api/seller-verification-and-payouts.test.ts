/**
 * Origin verification against real local HTTP servers (file served, absent, wrong token, redirect, private
 * address refused by default), banking declaration, payout mode, accrued payables and flush history.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { fetchVerificationFile } from '../../../src/services/origin-verifier.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

function serve(handler: http.RequestListener): Promise<{ origin: string; close(): Promise<void> }> {
  return new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ origin: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

describe('seller origin verification and payouts (HTTP, PostgreSQL)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  let session: string;

  before(async () => {
    t = await startTestTreasury();
    session = (await signInWithNewKey(t)).session;
  });
  after(async () => {
    await t?.stop();
  });

  it('verifies an origin that serves the issued token, and refuses absent, wrong, redirected files', async () => {
    let fileBody: string | null = null;
    let redirect = false;
    const origin = await serve((req, res) => {
      if (req.url !== '/.well-known/xx-verification.txt') return res.writeHead(404).end();
      if (redirect) return res.writeHead(302, { location: 'http://evil.test/x' }).end();
      if (fileBody === null) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/plain' }).end(fileBody);
    });
    try {
      const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Origin Co', origin: origin.origin } })).body;
      const info = await t.request('GET', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat });
      assert.match(info.body.token, /^xx-verify-[0-9a-f]{32}$/);
      assert.equal(info.body.path, '/.well-known/xx-verification.txt');

      const absent = await t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat });
      assert.equal(absent.status, 404);
      assert.equal(absent.body.error_code, 'well_known_not_found');

      fileBody = 'xx-verify-00000000000000000000000000000000\n';
      assert.equal((await t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat })).body.error_code, 'verification_token_mismatch');

      redirect = true;
      assert.equal((await t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat })).body.error_code, 'origin_redirect_refused');
      redirect = false;

      fileBody = `${info.body.token}\n`;
      const ok = await t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.origin_verified, true);

      const moved = await t.request('PATCH', `/v1/sellers/${seller.seller_id}`, { token: session, body: { origin: 'http://127.0.0.1:9' } });
      assert.equal(moved.body.origin_verified, false, 'a new origin must be verified again');
      const down = await t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat });
      assert.equal(down.body.error_code, 'origin_unreachable');
    } finally {
      await origin.close();
    }
  });

  it('refuses private and loopback origins unless the sandbox allows them, and oversize files', async () => {
    const big = await serve((_req, res) => res.writeHead(200).end('x'.repeat(10_000)));
    try {
      await assert.rejects(fetchVerificationFile(big.origin, { allowPrivate: false }), (e: { code?: string }) => e.code === 'origin_not_public');
      await assert.rejects(fetchVerificationFile(big.origin, { allowPrivate: true }), /larger than 4 KiB/);
      await assert.rejects(fetchVerificationFile('ftp://example.com', { allowPrivate: true }), /http\(s\)/);
    } finally {
      await big.close();
    }
  });

  it('banking declaration, payout modes, accrued payables and flush history', async () => {
    const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Payout Co' } })).body;
    assert.deepEqual((await t.request('GET', `/v1/sellers/${seller.seller_id}/banking`, { token: seller.pat })).body, { seller_id: seller.seller_id, legal_entity: null, country: null, state: 'none' });
    const banking = await t.request('PUT', `/v1/sellers/${seller.seller_id}/banking`, { token: session, body: { legal_entity: 'Payout Co GmbH', country: 'DE' } });
    assert.deepEqual(banking.body, { seller_id: seller.seller_id, legal_entity: 'Payout Co GmbH', country: 'DE', state: 'declared' });
    assert.equal((await t.request('POST', `/v1/sellers/${seller.seller_id}/banking/verify`, { token: session })).status, 403, 'only the operator verifies');
    const verified = await t.request('POST', `/v1/sellers/${seller.seller_id}/banking/verify`, { token: t.adminToken });
    assert.equal(verified.body.state, 'verified');
    const redeclared = await t.request('PUT', `/v1/sellers/${seller.seller_id}/banking`, { token: session, body: { legal_entity: 'Payout Co AG', country: 'CH' } });
    assert.equal(redeclared.body.state, 'declared', 'new details need a new verification');

    const report = (amount: string) =>
      t.request('POST', '/v1/ledger', { token: seller.pat, body: { tx_hash: `0x${randomBytes(32).toString('hex')}`, payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66', amount, network: 'eip155:84532' } });
    await report('250000');
    const direct = await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts`, { token: seller.pat });
    assert.deepEqual({ mode: direct.body.payout_mode, accrued: direct.body.accrued_usd }, { mode: 'direct', accrued: '0' });
    assert.equal((await t.request('POST', `/v1/sellers/${seller.seller_id}/payouts/flush`, { token: session })).body.error_code, 'payouts_not_applicable');

    await t.request('PATCH', `/v1/sellers/${seller.seller_id}`, { token: session, body: { payout_mode: 'platform_mor' } });
    await report('500000');
    assert.equal((await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts`, { token: seller.pat })).body.accrued_usd, '0.5', 'rows earned in direct mode never accrue');
    assert.equal((await t.request('POST', `/v1/sellers/${seller.seller_id}/payouts/flush`, { token: seller.pat })).status, 403, 'flushing needs the owner session');
    const flushed = await t.request('POST', `/v1/sellers/${seller.seller_id}/payouts/flush`, { token: session });
    assert.equal(flushed.body.accrued_usd, '0');
    assert.equal(flushed.body.flushes.length, 1);
    assert.equal(flushed.body.flushes[0].amount_usd, '0.5');
    await report('10000');
    assert.equal((await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts`, { token: seller.pat })).body.accrued_usd, '0.01');
  });
});
