/**
 * A purchase retried after its answer was lost never pays twice (src/sdk/x402-purchase.ts), through the real
 * API (PostgreSQL + SoftHSM) and a seller that declares the x402 `payment-identifier` extension
 * (test/support/purchase-seller.ts): a Treasury wallet's retry with the same purchase key sends the same
 * identifier and the same payment (one authorization, one spend); a local viem account's payment is sent
 * again, not signed again. Only the SDK's public surface of before the purchase store is used here
 * (`createX402Buyer`, `TreasuryClient`, `init.purchaseKey`), so the file runs as is against a buyer without
 * purchases — where both cases sign a second payment and fail.
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createX402Buyer, TreasuryClient, type X402RequestInit } from '../../../src/sdk/index.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { startPurchaseSeller, type PurchaseSeller } from '../../support/purchase-seller.js';
import { daySpentMicro } from '../../support/spend-totals.js';

describe('a purchase retried after a lost answer pays once (real API, a seller declaring payment-identifier)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let client: TreasuryClient;
  let token: string;
  let seller: PurchaseSeller;
  const servers = new LoopbackServers();

  before(async () => {
    t = await startTestTreasury();
    token = await mintAgentKey(t, 'retrier');
    client = new TreasuryClient({ apiUrl: t.baseUrl, token });
  });
  beforeEach(async () => {
    // Not required: a buyer that sends no identifier still pays (and, retried, pays twice).
    seller = await startPurchaseSeller(servers, { required: false });
  });
  after(async () => {
    await servers.closeAll();
    await t?.stop();
  });

  async function wallet(): Promise<string> {
    const res = await t.request('POST', '/v1/wallets', { token, body: { policy: {} } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  }
  const authorizations = (walletId: string) => t.db.knex('authorizations').where({ wallet_id: walletId }).select('*');

  /** The request's purchase key (typed as the request options of the SDK with purchases). */
  const purchase = (purchaseKey: string) => ({ purchaseKey }) as X402RequestInit;

  it('a retry after a lost answer sends the same identifier and payment: one authorization, one spend', async () => {
    const walletId = await wallet();
    const buyer = createX402Buyer({ client, walletId, maxPriceUsd: '0.05' });
    seller.dropPaid = 1;
    await assert.rejects(buyer.request(`${seller.url}/report`, purchase('report-1')));
    const result = await buyer.request(`${seller.url}/report`, purchase('report-1'));
    assert.equal(result.status, 200, result.body);
    assert.equal(seller.paymentHeaders.length, 2);
    assert.equal((await authorizations(walletId)).length, 1, 'Treasury signed once');
    assert.equal(seller.paymentHeaders[1], seller.paymentHeaders[0], 'the same payment, byte for byte');
    assert.equal(seller.ids[1], seller.ids[0]);
    assert.equal(await daySpentMicro(t.db.knex, walletId), '10000', 'spent once');

    // Settled: the purchase is over, so the same key is a new purchase.
    await buyer.request(`${seller.url}/report`, purchase('report-1'));
    assert.notEqual(seller.ids[2], seller.ids[0]);
    assert.equal((await authorizations(walletId)).length, 2);
  });

  it("a local viem account's payment is sent again on a retry of its purchase, never signed twice", async () => {
    const key = privateKeyToAccount(generatePrivateKey());
    let signatures = 0;
    const account = {
      address: key.address,
      signTypedData: (typedData: Parameters<typeof key.signTypedData>[0]) => {
        signatures += 1;
        return key.signTypedData(typedData);
      },
    };
    const buyer = createX402Buyer({ account });
    seller.dropPaid = 1;
    await assert.rejects(buyer.request(`${seller.url}/report`, purchase('local')));
    const result = await buyer.request(`${seller.url}/report`, purchase('local'));
    assert.equal(result.status, 200, result.body);
    assert.equal(signatures, 1);
    assert.equal(seller.paymentHeaders[1], seller.paymentHeaders[0]);
    assert.match(seller.ids[0]!, /^pay_[0-9a-f]{32}$/);
  });
});
