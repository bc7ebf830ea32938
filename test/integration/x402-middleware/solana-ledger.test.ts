/**
 * A Solana payment in the seller's ledger, end to end: the official `@x402/svm` client pays our Koa seller on
 * the offline chain (ops/solana/), the middleware reports the row to the real API (HTTP, PostgreSQL), and the
 * row counts only once the ledger verifier read the transaction on chain (TREASURY_SOLANA_RPC_URL) against a
 * Solana pay-to the seller proved with its Ed25519 signature. Forged reports never count: an unknown signature,
 * a transaction that paid someone else, the wrong amount, the wrong payer.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { generateKeyPairSigner, getBase58Decoder, type KeyPairSigner } from '@solana/kit';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { wrapFetchWithPayment } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClientScheme } from '@x402/svm/exact/client';
import { pino } from 'pino';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { payToClaimMessage } from '../../../src/api/sellers/seller-pay-to-service.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { solanaPayToKey, waitForLedgerRow } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { closedPortUrl, startSellerApp, type SellerApp } from './x402-fakes.js';

describe('the ledger counts a Solana payment once verified on chain (official client, Koa seller, API)', function () {
  this.timeout(120_000);
  let solana: LocalSolana;
  let t: TestTreasury;
  let session: string;
  let seller: { seller_id: string; pat: string };
  let buyer: KeyPairSigner;
  const payTo = solanaPayToKey();
  const stranger = solanaPayToKey();
  const apps: SellerApp[] = [];

  const sellerApp = async (apiUrl: string, to: string) => {
    const app = await startSellerApp({
      token: seller.pat,
      api_url: apiUrl,
      pay_to: undefined,
      solana: { pay_to: to, facilitator_url: solana.facilitatorUrl },
      timeouts: { verify_ms: 10_000, settle_ms: 10_000, platform_ms: 5_000 },
    });
    apps.push(app);
    return app;
  };
  const pay = async (app: SellerApp): Promise<string> => {
    const client = new x402Client().register(
      solana.network,
      new ExactSvmClientScheme(buyer, { rpcUrl: solana.rpcUrl }),
    );
    const res = await wrapFetchWithPayment(fetch, client)(`${app.url}/paid`);
    assert.equal(res.status, 200, await res.clone().text());
    return decodePaymentResponseHeader(res.headers.get('payment-response')!).transaction;
  };
  const report = (body: Record<string, unknown>) =>
    t.request('POST', '/v1/ledger', {
      token: seller.pat,
      body: { payer: buyer.address, network: solana.network, amount: '10000', ...body },
    });
  const revenue = async () => (await t.request('GET', '/v1/ledger/revenue', { token: seller.pat })).body;

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    t = await startTestTreasury({
      extraEnv: {
        TREASURY_SOLANA_RPC_URL: solana.rpcUrl,
        TREASURY_LEDGER_NOT_FOUND_GRACE_SECONDS: '0',
        TREASURY_LEDGER_VERIFY_INTERVAL_MS: '100',
      },
    });
    session = (await signInWithNewKey(t)).session;
    const created = await t.request('POST', '/v1/sellers', {
      token: session,
      body: { name: 'Solana seller', payout_mode: 'direct' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    seller = { seller_id: created.body.seller_id, pat: created.body.pat };
    buyer = await generateKeyPairSigner();
    await solana.faucet.fundUsdc(buyer.address, 1_000_000n);
    await solana.faucet.fundUsdc(payTo.address, 0n);
    await solana.faucet.fundUsdc(stranger.address, 0n);
  });

  after(async () => {
    for (const app of apps) {
      await app.middleware.flush();
      await app.stop();
    }
    await t?.stop();
    await solana?.stop();
  });

  it('a paid call is reported and waits for a proven Solana pay-to; another key proves nothing; once proven it verifies and counts', async () => {
    const signature = await pay(await sellerApp(t.baseUrl, payTo.address));
    await apps[0]!.middleware.flush();
    const waiting = await waitForLedgerRow(t, seller.pat, signature, (r) => r.reason === 'pay_to_not_registered');
    assert.equal(waiting.status, 'pending');
    assert.equal((await revenue()).total_usd, '0');

    const forged = await t.request('POST', `/v1/sellers/${seller.seller_id}/pay-to`, {
      token: session,
      body: { address: payTo.address, signature: stranger.sign(payToClaimMessage(seller.seller_id, payTo.address)) },
    });
    assert.deepEqual([forged.status, forged.body.error_code], [422, 'pay_to_signature_invalid']);
    const proven = await t.request('POST', `/v1/sellers/${seller.seller_id}/pay-to`, {
      token: session,
      body: { address: payTo.address, signature: payTo.sign(payToClaimMessage(seller.seller_id, payTo.address)) },
    });
    assert.equal(proven.status, 200, JSON.stringify(proven.body));
    assert.deepEqual(
      proven.body.pay_to.map((p: { address: string }) => p.address),
      [payTo.address],
    );

    const row = await waitForLedgerRow(t, seller.pat, signature, (r) => r.status !== 'pending');
    assert.equal(row.status, 'verified', JSON.stringify(row));
    assert.equal(row.tx_hash, signature, 'the base58 signature is kept as reported');
    const summary = await revenue();
    assert.equal(summary.total_usd, '0.01');
    assert.equal(summary.count, 1);
  });

  it('forged reports never count: unknown signature, paid to someone else, wrong amount, wrong payer', async () => {
    const offline = await closedPortUrl();
    const toSeller = await sellerApp(offline, payTo.address);
    const toStranger = await sellerApp(offline, stranger.address);
    const unknown = getBase58Decoder().decode(randomBytes(64));
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tx_hash: unknown }, 'transaction_not_found'],
      [{ tx_hash: await pay(toStranger) }, 'recipient_mismatch'],
      [{ tx_hash: await pay(toSeller), amount: '20000' }, 'amount_mismatch'],
      [{ tx_hash: await pay(toSeller), payer: stranger.address }, 'payer_mismatch'],
    ];
    for (const [body, reason] of cases) {
      const res = await report(body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const row = await waitForLedgerRow(t, seller.pat, body.tx_hash as string, (r) => r.status !== 'pending');
      assert.deepEqual([row.status, row.reason], ['rejected', reason]);
    }
    const summary = await revenue();
    assert.equal(summary.total_usd, '0.01', 'only the verified payment counts');
    assert.equal(summary.rejected.count, 4);
  });
});
