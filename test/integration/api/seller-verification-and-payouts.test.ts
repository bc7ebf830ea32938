/**
 * Origin verification against real local HTTP servers (file served, absent, wrong token, redirect, private
 * address refused by default), banking declaration, payout mode, accrued payables and flush history; the
 * payables row kept by PostgreSQL (every verified ledger row and flush counted once, whoever writes it, also
 * while verifications and flushes race). Rows are verified here by a test fixture that writes what the ledger
 * verifier writes (on-chain verification itself: ledger-verification.test.ts).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { fetchVerificationFile } from '../../../src/api/sellers/origin/origin-verifier.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { markLedgerVerifiedForTest } from '../../support/seller-pay-to.js';
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
  const t = useTestTreasury();
  let session: string;

  before(async () => {
    session = (await signInWithNewKey(t)).session;
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
      const seller = (
        await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Origin Co', origin: origin.origin } })
      ).body;
      const info = await t.request('GET', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat });
      assert.match(info.body.token, /^xx-verify-[0-9a-f]{32}$/);
      assert.equal(info.body.path, '/.well-known/xx-verification.txt');

      const absent = await t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat });
      assert.equal(absent.status, 404);
      assert.equal(absent.body.error_code, 'well_known_not_found');

      fileBody = 'xx-verify-00000000000000000000000000000000\n';
      assert.equal(
        (await t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat })).body.error_code,
        'verification_token_mismatch',
      );

      redirect = true;
      assert.equal(
        (await t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat })).body.error_code,
        'origin_redirect_refused',
      );
      redirect = false;

      fileBody = `${info.body.token}\n`;
      const ok = await t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.origin_verified, true);

      const moved = await t.request('PATCH', `/v1/sellers/${seller.seller_id}`, {
        token: session,
        body: { origin: 'http://127.0.0.1:9' },
      });
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
      // The test server's port is allowed here, so what refuses is the address (loopback), not the port.
      await assert.rejects(
        fetchVerificationFile(big.origin, { allowPrivate: false, allowedPorts: [Number(new URL(big.origin).port)] }),
        (e: { code?: string }) => e.code === 'origin_not_public',
      );
      await assert.rejects(
        fetchVerificationFile(big.origin, { allowPrivate: false }),
        (e: { code?: string }) => e.code === 'origin_port_refused',
      );
      await assert.rejects(
        fetchVerificationFile(big.origin, { allowPrivate: true }),
        (e: { code?: string; message?: string }) =>
          e.code === 'origin_response_too_large' && /larger than 4 KiB/.test(e.message ?? ''),
      );
      await assert.rejects(fetchVerificationFile('ftp://example.com', { allowPrivate: true }), /http\(s\)/);
    } finally {
      await big.close();
    }
  });

  /**
   * The seller's collection wallet on Base Sepolia, as its paywall gets it (POST /v1/auth/verify): what reaches
   * it is what a platform_mor seller is owed (docs/adr/0011). Rows are verified here by a fixture, not on chain;
   * no facilitator is configured, so a flush records payouts that stay pending.
   */
  const collectionWallet = async (pat: string) => {
    const res = await t.request('POST', '/v1/auth/verify', { token: pat, body: { network: 'eip155:84532' } });
    assert.match(String(res.body.collect_to), /^0x[0-9a-fA-F]{40}$/, JSON.stringify(res.body));
  };

  it('banking declaration, payout modes, accrued payables and flush history', async () => {
    const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Payout Co' } })).body;
    assert.deepEqual((await t.request('GET', `/v1/sellers/${seller.seller_id}/banking`, { token: seller.pat })).body, {
      seller_id: seller.seller_id,
      legal_entity: null,
      country: null,
      state: 'none',
    });
    const banking = await t.request('PUT', `/v1/sellers/${seller.seller_id}/banking`, {
      token: session,
      body: { legal_entity: 'Payout Co GmbH', country: 'DE' },
    });
    assert.deepEqual(banking.body, {
      seller_id: seller.seller_id,
      legal_entity: 'Payout Co GmbH',
      country: 'DE',
      state: 'declared',
    });
    assert.equal(
      (await t.request('POST', `/v1/sellers/${seller.seller_id}/banking/verify`, { token: session })).status,
      403,
      'only the operator verifies',
    );
    const verified = await t.request('POST', `/v1/sellers/${seller.seller_id}/banking/verify`, { token: t.adminToken });
    assert.equal(verified.body.state, 'verified');
    const redeclared = await t.request('PUT', `/v1/sellers/${seller.seller_id}/banking`, {
      token: session,
      body: { legal_entity: 'Payout Co AG', country: 'CH' },
    });
    assert.equal(redeclared.body.state, 'declared', 'new details need a new verification');

    const report = (amount: string) =>
      t.request('POST', '/v1/ledger', {
        token: seller.pat,
        body: {
          tx_hash: `0x${randomBytes(32).toString('hex')}`,
          payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
          amount,
          network: 'eip155:84532',
        },
      });
    await report('250000');
    await markLedgerVerifiedForTest(t.db.knex, seller.seller_id);
    const direct = await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts`, { token: seller.pat });
    assert.deepEqual(
      { mode: direct.body.payout_mode, accrued: direct.body.accrued_usd },
      { mode: 'direct', accrued: '0' },
    );
    assert.equal(
      (await t.request('POST', `/v1/sellers/${seller.seller_id}/payouts/flush`, { token: session })).body.error_code,
      'payouts_not_applicable',
    );

    await t.request('PATCH', `/v1/sellers/${seller.seller_id}`, {
      token: session,
      body: { payout_mode: 'platform_mor' },
    });
    // Its buyers now pay the collection wallet the platform holds for it (created when its paywall asks).
    await collectionWallet(seller.pat);
    await report('500000');
    const unverified = (await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts`, { token: seller.pat })).body;
    assert.deepEqual(
      [unverified.accrued_usd, unverified.pending_usd, unverified.pending_count],
      ['0', '0.5', 1],
      'a pending row accrues nothing',
    );
    await markLedgerVerifiedForTest(t.db.knex, seller.seller_id);
    assert.equal(
      (await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts`, { token: seller.pat })).body.accrued_usd,
      '0.5',
      'rows earned in direct mode never accrue',
    );
    assert.equal(
      (await t.request('POST', `/v1/sellers/${seller.seller_id}/payouts/flush`, { token: seller.pat })).status,
      403,
      'flushing needs the owner session',
    );
    const flushed = await t.request('POST', `/v1/sellers/${seller.seller_id}/payouts/flush`, { token: session });
    assert.equal(flushed.body.accrued_usd, '0');
    assert.equal(flushed.body.flushes.length, 1);
    assert.equal(flushed.body.flushes[0].amount_usd, '0.5');
    assert.deepEqual(
      [flushed.body.flushes[0].status, flushed.body.flushes[0].reason],
      ['pending', 'payout_rail_not_configured'],
    );
    await report('10000');
    await markLedgerVerifiedForTest(t.db.knex, seller.seller_id);
    assert.equal(
      (await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts`, { token: seller.pat })).body.accrued_usd,
      '0.01',
    );
  });

  it('verifications and flushes racing: every verified platform_mor row is paid once — flushed plus accrued equals what was earned', async () => {
    const seller = (
      await t.request('POST', '/v1/sellers', {
        token: session,
        body: { name: 'Race Payouts', payout_mode: 'platform_mor' },
      })
    ).body;
    const report = (amount: number, txHash = `0x${randomBytes(32).toString('hex')}`) =>
      t.request('POST', '/v1/ledger', {
        token: seller.pat,
        body: {
          tx_hash: txHash,
          payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
          amount: String(amount),
          network: 'eip155:84532',
        },
      });
    await collectionWallet(seller.pat);
    const amounts = Array.from({ length: 60 }, (_, i) => 1_000 + i * 37);
    const flushes = Array.from({ length: 6 }, () =>
      t.request('POST', `/v1/sellers/${seller.seller_id}/payouts/flush`, { token: session }),
    );
    const answers = await Promise.all(amounts.map((a) => report(a)));
    for (const a of answers) assert.equal(a.status, 201, JSON.stringify(a.body));
    // Each row verified on its own (as the verifier writes it) while flushes run.
    const verify = (id: string) =>
      t.db
        .knex('ledger_entries')
        .where({ id, status: 'pending' })
        .update({ status: 'verified', reason: null, verified_at: new Date(), confirmations: 1, log_index: 0 });
    const raced = await Promise.all([...answers.map((a) => verify(a.body.id)), ...flushes]);
    // A flush that finds another of the same seller under way is refused at once (409 payout_in_progress).
    for (const r of raced)
      if (typeof r !== 'number')
        assert.ok(
          r.status === 200 || (r.status === 409 && r.body.error_code === 'payout_in_progress'),
          JSON.stringify(r.body),
        );
    // A verified row inserted by another process (or another version of the service) is counted as well; a pending one is not.
    const row = (id: string, status: string, amount: string) => ({
      id,
      seller_id: seller.seller_id,
      tx_hash: `0x${randomBytes(32).toString('hex')}`,
      payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
      amount_micro: amount,
      network: 'eip155:84532',
      payout_mode: 'platform_mor',
      status,
      log_index: 0,
      created_at: new Date(),
    });
    await t.db
      .knex('ledger_entries')
      .insert([row('led_direct_insert_0001', 'verified', '7'), row('led_direct_insert_0002', 'pending', '1000000')]);
    // Reported again: the same tx_hash is one row, counted once.
    const again = await report(amounts[0]!, answers[0]!.body.tx_hash);
    assert.deepEqual([again.status, again.body.duplicate], [200, true], JSON.stringify(again.body));
    const earned = amounts.reduce((a, b) => a + b, 0) + 7;
    const flushed =
      (await t.db.knex('payout_flushes').where({ seller_id: seller.seller_id }).sum({ s: 'amount_micro' }))[0]!.s ?? 0;
    const accrued = (await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts`, { token: seller.pat })).body
      .accrued_usd as string;
    assert.equal(Number(flushed) + Math.round(Number(accrued) * 1e6), earned);
    const last = await t.request('POST', `/v1/sellers/${seller.seller_id}/payouts/flush`, { token: session });
    assert.equal(last.body.accrued_usd, '0');
    const paid = (
      await t.db.knex('payout_flushes').where({ seller_id: seller.seller_id }).sum({ s: 'amount_micro' })
    )[0]!.s;
    assert.equal(Number(paid), earned, 'everything earned was paid out, nothing twice');
    // PostgreSQL refuses a flush above what was earned, whoever writes it.
    await assert.rejects(
      t.db.knex('payout_flushes').insert({
        id: 'po_over_earned_0001',
        seller_id: seller.seller_id,
        amount_micro: '1',
        created_by: 'test',
        created_at: new Date(),
      }),
      /seller_payables_paid_within_earned/,
    );
  });
});
