/**
 * The buyer SDK's purchases (src/sdk/x402-purchase.ts) against a seller that declares the x402
 * `payment-identifier` extension (test/support/purchase-seller.ts: the official declaration, echo check and
 * requirement) and the real API (PostgreSQL + SoftHSM):
 * - the purchase's identifier is in the payload as the official client puts it, and it keys Treasury's pay;
 * - a lost answer, then a new process on the same file store: the stored payment is sent again;
 * - a "crash" between Treasury's signature and the buyer's record of it (a new buyer, the same file store)
 *   gets Treasury's recorded authorization back: one authorization, one spend;
 * - the same identifier for other terms: 409 `payment_identifier_conflict` from Treasury, surfaced as
 *   PurchaseTermsChangedError; a stored payment for terms no longer offered is not signed again.
 * The retry in one process (and a local account's) is ./payment-identifier-buyer-retry.test.ts.
 */
import assert from 'node:assert/strict';
import {
  createX402Buyer,
  filePurchaseStore,
  memoryPurchaseStore,
  PurchaseStoreError,
  PurchaseTermsChangedError,
  TreasuryApiError,
  TreasuryClient,
  type PurchaseStore,
} from '../../../src/sdk/index.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { startPurchaseSeller, type PurchaseSeller } from '../../support/purchase-seller.js';
import { daySpentMicro } from '../../support/spend-totals.js';
import { fileTempDir } from '../../support/temp-dirs.js';

describe('buyer SDK purchases with a payment identifier (real API, a seller declaring payment-identifier)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let client: TreasuryClient;
  let token: string;
  let seller: PurchaseSeller;
  const servers = new LoopbackServers();

  before(async () => {
    t = await startTestTreasury();
    token = await mintAgentKey(t, 'purchaser');
    client = new TreasuryClient({ apiUrl: t.baseUrl, token });
  });
  beforeEach(async () => {
    seller = await startPurchaseSeller(servers);
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

  it("puts the purchase's identifier in the payload as the official client does, and keys Treasury's pay by it", async () => {
    const walletId = await wallet();
    const buyer = createX402Buyer({ client, walletId, maxPriceUsd: '0.05' });
    const result = await buyer.request(`${seller.url}/report`);
    assert.equal(result.status, 200, result.body);
    assert.equal(result.paid, true);
    const id = seller.ids[0]!;
    assert.match(id, /^pay_[0-9a-f]{32}$/);
    const extension = seller.payloads[0]!.extensions['payment-identifier'];
    assert.equal(extension.info.required, true, 'the declaration is echoed');
    assert.ok(extension.schema, 'its schema too');
    const rows = await authorizations(walletId);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].idempotency_key, id, "Treasury's payment is keyed by the identifier");
  });

  it("a crash between Treasury's signature and the buyer's record: a new buyer on the same store pays nothing new", async () => {
    const walletId = await wallet();
    const dir = fileTempDir('purchases-');
    const files = filePurchaseStore({ dir });
    // The first process stores the identifier, then dies as it writes the signed payment.
    let puts = 0;
    const dying: PurchaseStore = {
      get: (k) => files.get(k),
      delete: (k) => files.delete(k),
      put: async (k, p) => {
        if ((puts += 1) === 2) throw new Error('killed');
        await files.put(k, p);
      },
    };
    const first = createX402Buyer({ client, walletId, purchases: dying });
    await assert.rejects(first.request(`${seller.url}/report`, { purchaseKey: 'k' }), PurchaseStoreError);
    assert.equal(seller.paymentHeaders.length, 0, 'nothing was sent');
    assert.equal((await authorizations(walletId)).length, 1, 'Treasury signed');

    const second = createX402Buyer({ client, walletId, purchases: filePurchaseStore({ dir }) });
    const result = await second.request(`${seller.url}/report`, { purchaseKey: 'k' });
    assert.equal(result.status, 200, result.body);
    const rows = await authorizations(walletId);
    assert.equal(rows.length, 1, 'the same authorization, replayed');
    assert.equal(result.payment?.authorization_id, rows[0].id);
    assert.equal(await daySpentMicro(t.db.knex, walletId), '10000');
  });

  it('a lost answer, then a new process on the same file store: the stored payment is sent again', async () => {
    const walletId = await wallet();
    const dir = fileTempDir('purchases-');
    seller.dropPaid = 1;
    const first = createX402Buyer({ client, walletId, purchases: filePurchaseStore({ dir }) });
    await assert.rejects(first.request(`${seller.url}/report`, { purchaseKey: 'k' }));
    const second = createX402Buyer({ client, walletId, purchases: filePurchaseStore({ dir }) });
    assert.equal((await second.request(`${seller.url}/report`, { purchaseKey: 'k' })).status, 200);
    assert.equal(seller.paymentHeaders[1], seller.paymentHeaders[0]);
    assert.equal((await authorizations(walletId)).length, 1);
  });

  it('the same identifier for other terms: Treasury answers 409 payment_identifier_conflict (PurchaseTermsChangedError)', async () => {
    const walletId = await wallet();
    const paymentId = 'pay_conflicting_terms_0123456789';
    const buyer = createX402Buyer({ client, walletId });
    seller.dropPaid = 1;
    await assert.rejects(buyer.request(`${seller.url}/report`, { paymentId }));
    // The price changed: the stored payment is for terms no longer offered, and is not signed again.
    seller.amount = '20000';
    await assert.rejects(buyer.request(`${seller.url}/report`, { paymentId }), PurchaseTermsChangedError);
    // A buyer without the stored payment asks Treasury, which refuses the identifier for other terms.
    const other = createX402Buyer({ client, walletId, purchases: memoryPurchaseStore() });
    await assert.rejects(other.request(`${seller.url}/report`, { paymentId }), (err: unknown) => {
      assert.ok(err instanceof PurchaseTermsChangedError, String(err));
      const cause = err.walk((e) => e instanceof TreasuryApiError) as TreasuryApiError;
      assert.equal(cause.code, 'payment_identifier_conflict');
      assert.equal(cause.status, 409);
      return true;
    });
    assert.equal((await authorizations(walletId)).length, 1);
  });
});
