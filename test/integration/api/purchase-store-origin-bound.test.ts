/**
 * One seller cannot fill the buyer's purchase store for every other (src/sdk/purchase-origin-bound.ts): through
 * the buyer SDK, the real API (PostgreSQL + SoftHSM) and two loopback sellers — one that prices at one raw unit
 * for a day (`maxTimeoutSeconds` 86,400: Treasury signs an authorization valid that long) and answers every paid
 * retry with a 402 without settling, and an honest one (test/support/purchase-seller.ts):
 * - a file store (what `xx buy` keeps, here bounded to 32 records): the unsettling origin gets
 *   MAX_LIVE_PURCHASES_PER_ORIGIN purchases, each kept signed for a day; the next new one there is
 *   PurchaseOriginLimitError (`purchase_origin_limit_reached`) before anything is signed, however many more are
 *   tried; the honest seller is still paid;
 * - the memory store (the SDK's default, what `xx mcp` keeps): the same bound; a live purchase of the full origin
 *   is still resumed (its stored payment sent again, nothing signed anew).
 */
import assert from 'node:assert/strict';
import {
  createX402Buyer,
  filePurchaseStore,
  memoryPurchaseStore,
  TreasuryClient,
  X402PaymentFailedError,
  type PurchaseStore,
} from '../../../src/sdk/index.js';
import { MAX_LIVE_PURCHASES_PER_ORIGIN } from '../../../src/sdk/purchase-origin-bound.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { startPurchaseSeller, type PurchaseSeller } from '../../support/purchase-seller.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { startUnsettlingSeller, type UnsettlingSeller } from '../../support/unsettling-seller.js';

const codeOf = (err: unknown) => (err as { code?: unknown } | null)?.code;

describe('buyer SDK: one origin cannot fill the purchase store (real API, an unsettling seller)', function () {
  this.timeout(300_000);
  let t: TestTreasury;
  let client: TreasuryClient;
  let token: string;
  let honest: PurchaseSeller;
  let unsettling: UnsettlingSeller;
  const servers = new LoopbackServers();

  before(async () => {
    t = await startTestTreasury();
    token = await mintAgentKey(t, 'origin-bound');
    client = new TreasuryClient({ apiUrl: t.baseUrl, token });
  });
  beforeEach(async () => {
    honest = await startPurchaseSeller(servers);
    unsettling = await startUnsettlingSeller(servers);
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
  const signatures = async (walletId: string) =>
    (await t.db.knex('authorizations').where({ wallet_id: walletId }).select('id')).length;

  /** `count` new purchases at the unsettling seller: the code each failed with. */
  async function unsettledPurchases(purchases: PurchaseStore, walletId: string, count: number, name: string) {
    const buyer = createX402Buyer({ client, walletId, purchases, maxPriceUsd: '0.05' });
    const codes: unknown[] = [];
    for (let i = 0; i < count; i++) {
      const err = await buyer.request(`${unsettling.url}/r${i}`, { purchaseKey: `${name}${i}` }).then(
        (r) => assert.fail(`an unsettling purchase was paid: ${r.status}`),
        (e: unknown) => e,
      );
      if (!(err instanceof X402PaymentFailedError)) codes.push(codeOf(err));
    }
    return { buyer, codes };
  }

  it('a file store: the unsettling origin gets its share, then its new purchases are refused; the honest seller is paid', async () => {
    const walletId = await wallet();
    const purchases = filePurchaseStore({ dir: fileTempDir('purchases-'), maxPurchases: 32 });
    const { codes } = await unsettledPurchases(purchases, walletId, 32, 'u');

    const buyer = createX402Buyer({ client, walletId, purchases, maxPriceUsd: '0.05' });
    const paid = await buyer.request(`${honest.url}/report`, { purchaseKey: 'honest' }).then(
      (r) => r,
      (e: unknown) => assert.fail(`the honest purchase failed: ${String(codeOf(e))}: ${String(e)}`),
    );
    assert.equal(paid.status, 200, paid.body);
    assert.equal(paid.paid, true);

    const refused = 32 - MAX_LIVE_PURCHASES_PER_ORIGIN;
    assert.deepEqual(codes, Array<string>(refused).fill('purchase_origin_limit_reached'));
    assert.equal(unsettling.paymentHeaders.length, MAX_LIVE_PURCHASES_PER_ORIGIN, 'no refused purchase was sent');
    assert.equal(await signatures(walletId), MAX_LIVE_PURCHASES_PER_ORIGIN + 1, 'no refused purchase was signed');
    const kept = await purchases.get('u0');
    assert.ok(kept?.signed, 'an unsettled purchase keeps its signed payment');
    assert.ok(kept.expiresAt > Date.now() + 86_000_000, 'for as long as its authorization (a day)');
    assert.equal(kept.origin, new URL(unsettling.url).origin);
  });

  it('the memory store: the same share; a live purchase of the full origin is still resumed', async () => {
    const walletId = await wallet();
    const purchases = memoryPurchaseStore();
    const { buyer, codes } = await unsettledPurchases(purchases, walletId, MAX_LIVE_PURCHASES_PER_ORIGIN + 1, 'm');
    assert.deepEqual(codes, ['purchase_origin_limit_reached']);
    const signed = await signatures(walletId);

    // A retry of a live purchase there is not a new one: its stored payment is sent again, nothing signed.
    await assert.rejects(buyer.request(`${unsettling.url}/r0`, { purchaseKey: 'm0' }), X402PaymentFailedError);
    assert.equal(unsettling.paymentHeaders.at(-1), unsettling.paymentHeaders[0]);
    assert.equal(await signatures(walletId), signed);

    const paid = await buyer.request(`${honest.url}/report`, { purchaseKey: 'honest' });
    assert.equal(paid.paid, true, paid.body);
  });
});
