/**
 * A seller's ledger row names a buyer's Treasury authorization (and the buyer's payment history then shows it
 * settled with the row's transaction) only when the chain shows that authorization's own transfer: over HTTP
 * against anvil, the EIP-3009 test USDC, the local facilitator, SoftHSM and PostgreSQL. A real $0.01 transaction
 * reported with the nonce of an unsettled $0.50 authorization of the same buyer links nothing.
 */
import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import { createFacilitatorClient } from '../../../src/x402/facilitator-client.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { fundFromFaucet, startTestChain, type TestChain } from '../../support/chain-harness.js';
import { newProvenSeller, type ProvenSeller, waitForLedgerRow } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe('ledger rows and buyer authorizations: linked only by the chain (HTTP, PostgreSQL, SoftHSM, anvil)', function () {
  this.timeout(180_000);
  let chain: TestChain;
  let t: TestTreasury;
  let session: string;
  type Seller = ProvenSeller;
  const newSeller = (name: string, payoutMode: 'direct' | 'platform_mor'): Promise<Seller> =>
    newProvenSeller(t, session, name, payoutMode);
  const report = (seller: Seller, body: { tx_hash: string; payer: string; amount: string; nonce?: string }) =>
    t.request('POST', '/v1/ledger', { token: seller.pat, body: { network: chain.network, ...body } });

  before(async () => {
    chain = await startTestChain();
    t = await startTestTreasury({
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ [chain.network]: chain.rpcUrl }),
        TREASURY_LEDGER_NOT_FOUND_GRACE_SECONDS: '0',
        TREASURY_LEDGER_VERIFY_INTERVAL_MS: '100',
      },
    });
    session = (await signInWithNewKey(t)).session;
  });
  after(async () => {
    await t?.stop();
    await chain?.stop();
  });

  it("a nonce names a buyer's authorization only when the chain shows that authorization's own transfer", async () => {
    const seller = await newSeller('Nonce Claimer', 'direct');
    const owner = await signInWithNewKey(t);
    const treasuryPat = (
      await t.request('POST', '/v1/pats', { token: owner.session, body: { scope_type: 'treasury' } })
    ).body.pat as string;
    const wallet = (await t.request('POST', '/v1/wallets', { token: treasuryPat, body: { label: 'buyer' } })).body;
    await fundFromFaucet(chain, wallet.address, '5');
    const requirements = (amount: string) => ({
      scheme: 'exact',
      network: chain.network,
      payTo: seller.payTo.address,
      amount,
      asset: chain.usdc,
      extra: { name: 'USDC', version: '2' },
      maxTimeoutSeconds: 600,
    });
    const pay = async (amount: string) => {
      const res = await t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
        token: treasuryPat,
        body: { payment_requirements: requirements(amount) },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as { authorization_id: string; signature: string; authorization: { nonce: string } };
    };
    const settle = async (payment: Awaited<ReturnType<typeof pay>>, amount: string) => {
      const accepted = requirements(amount);
      const outcome = await createFacilitatorClient({ url: chain.facilitatorUrl }).settle({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          resource: { url: 'https://seller.test/paid' },
          accepted,
          payload: { signature: payment.signature, authorization: payment.authorization },
        },
        paymentRequirements: accepted,
      });
      assert.equal(outcome.kind, 'ok', JSON.stringify(outcome));
      return (outcome as { settlement: { transaction: Hex } }).settlement.transaction;
    };
    const big = await pay('500000'); // signed, never settled
    const small = await pay('10000');
    const honest = await pay('20000');
    const smallTx = await settle(small, '10000');
    const honestTx = await settle(honest, '20000');

    // The real $0.01 transaction reported with the unsettled $0.50 authorization's nonce.
    await report(seller, { tx_hash: smallTx, payer: wallet.address, amount: '10000', nonce: big.authorization.nonce });
    await report(seller, {
      tx_hash: honestTx,
      payer: wallet.address,
      amount: '20000',
      nonce: honest.authorization.nonce,
    });
    await waitForLedgerRow(t, seller.pat, smallTx, (r) => r.status === 'verified');
    await waitForLedgerRow(t, seller.pat, honestTx, (r) => r.status === 'verified');
    const rows = (await t.request('GET', '/v1/ledger?limit=10', { token: seller.pat })).body.entries as Array<{
      tx_hash: string;
      authorization_id: string | null;
    }>;
    const linkOf = (tx: string) => rows.find((r) => r.tx_hash === tx.toLowerCase())?.authorization_id;
    assert.equal(linkOf(smallTx), null, 'the $0.50 authorization did not move in that transaction');
    assert.equal(linkOf(honestTx), honest.authorization_id);

    const history = (await t.request('GET', `/v1/wallets/${wallet.id}/payments`, { token: treasuryPat })).body
      .payments as Array<{ id: string; status: string; tx_hash: string | null }>;
    const status = (id: string) => history.find((p) => p.id === id);
    assert.deepEqual(
      [status(big.authorization_id)?.status, status(big.authorization_id)?.tx_hash],
      ['signed', null],
      'the unsettled authorization is not shown as settled',
    );
    assert.deepEqual(
      [status(honest.authorization_id)?.status, status(honest.authorization_id)?.tx_hash],
      ['settled', honestTx.toLowerCase()],
    );
  });
});
