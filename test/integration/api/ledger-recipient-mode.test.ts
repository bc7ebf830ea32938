/**
 * A ledger row's payout mode is where the chain shows its buyer paid, not the seller's mode when it reported the
 * row; and the platform's own transfers are nobody's revenue. Over HTTP against a real anvil, the EIP-3009 test
 * USDC, the local x402 facilitator, SoftHSM and PostgreSQL (src/api/sellers/ledger/ledger-verifier.ts,
 * src/api/sellers/store/ledger-row-claim.ts):
 * - platform_mor → direct: a payment that reached the collection wallet before the switch and is reported after
 *   it verifies as platform_mor — collected by that wallet, owed to the seller, paid out by a flush — while a
 *   payment to the seller's pay-to after the switch is direct revenue, owed nothing;
 * - direct → platform_mor: a payment to the seller's pay-to before the switch and reported after it is direct
 *   revenue: the collection wallet collected nothing and nothing is owed; a payment to the collection wallet is;
 * - a payout (collection wallet → a pay-to address two sellers proved) reported by the other seller, a direct
 *   one, is rejected (platform_payout) and adds nothing to its revenue.
 */
import assert from 'node:assert/strict';
import type { Address, Hex } from 'viem';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import {
  anvilDevAccount,
  fundFromFaucet,
  startTestChain,
  type DevAccount,
  type TestChain,
  transferUsdc,
} from '../../support/chain-harness.js';
import { newProvenSeller, provePayTo, type ProvenSeller, waitForLedgerRow } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe('ledger rows take the mode of where the buyer paid; payouts are no revenue (HTTP, PostgreSQL, SoftHSM, anvil)', function () {
  this.timeout(240_000);
  let chain: TestChain;
  let t: TestTreasury;
  let session: string;

  /** Where the seller's paywall tells buyers to pay on the test network (its collection wallet, created on first use). */
  const collectTo = async (seller: ProvenSeller) => {
    const res = await t.request('POST', '/v1/auth/verify', { token: seller.pat, body: { network: chain.network } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.collect_to as Address | null;
  };
  const switchTo = async (seller: ProvenSeller, payoutMode: 'direct' | 'platform_mor') => {
    const res = await t.request('PATCH', `/v1/sellers/${seller.seller_id}`, {
      token: session,
      body: { payout_mode: payoutMode },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  const transfer = (from: DevAccount, to: Address, amount: bigint): Promise<Hex> =>
    transferUsdc(chain, from, to, amount);
  const report = async (seller: ProvenSeller, body: { tx_hash: string; payer: string; amount: string }) => {
    const res = await t.request('POST', '/v1/ledger', { token: seller.pat, body: { network: chain.network, ...body } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  };
  const decided = (seller: ProvenSeller, tx: string) =>
    waitForLedgerRow(t, seller.pat, tx, (r) => r.status !== 'pending', 30_000);
  const payouts = async (seller: ProvenSeller) =>
    (await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts`, { token: seller.pat })).body;
  const revenue = async (seller: ProvenSeller) =>
    (await t.request('GET', '/v1/ledger/revenue', { token: seller.pat })).body;
  const flush = (seller: ProvenSeller) =>
    t.request('POST', `/v1/sellers/${seller.seller_id}/payouts/flush`, { token: session });
  /** What the seller's collection wallet on the test network collected and paid out (micro-USD). */
  const collection = async (seller: ProvenSeller) => {
    const row = await t.db
      .knex('platform_collection_wallets')
      .where({ seller_id: seller.seller_id, network: chain.network })
      .first('collected_micro', 'paid_micro');
    return [String(row.collected_micro), String(row.paid_micro)];
  };
  /** The stored mode of the seller's row for `tx`. */
  const modeOf = async (seller: ProvenSeller, tx: string) =>
    (
      await t.db
        .knex('ledger_entries')
        .where({ seller_id: seller.seller_id, tx_hash: tx.toLowerCase() })
        .first('payout_mode')
    ).payout_mode as string;

  before(async () => {
    chain = await startTestChain();
    t = await startTestTreasury({
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ [chain.network]: chain.rpcUrl }),
        TREASURY_LEDGER_NOT_FOUND_GRACE_SECONDS: '0',
        TREASURY_LEDGER_VERIFY_INTERVAL_MS: '100',
        TREASURY_FACILITATOR_URL: chain.facilitatorUrl,
        TREASURY_MOR_NETWORKS: chain.network,
      },
    });
    session = (await signInWithNewKey(t)).session;
  });
  after(async () => {
    await t?.stop();
    await chain?.stop();
  });

  it('platform_mor → direct: a collected payment reported after the switch is owed and paid out; a direct one is not', async () => {
    const seller = await newProvenSeller(t, session, 'Left MoR', 'platform_mor');
    const wallet = (await collectTo(seller))!;
    const buyer = anvilDevAccount(7);
    await fundFromFaucet(chain, buyer.address, '10');
    const collected = await transfer(buyer, wallet, 300_000n);
    // The seller switches before its middleware reported the payment (a queued report, say).
    await switchTo(seller, 'direct');
    await report(seller, { tx_hash: collected, payer: buyer.address, amount: '300000' });
    const row = await decided(seller, collected);
    assert.deepEqual([row.status, row.reason], ['verified', null], 'the collection wallet got it');
    assert.equal(await modeOf(seller, collected), 'platform_mor');
    assert.deepEqual(await collection(seller), ['300000', '0']);
    assert.equal((await payouts(seller)).accrued_usd, '0.3', 'owed to the seller');

    // Paid to its pay-to, as its terms now say: revenue, owed nothing.
    const direct = await transfer(buyer, seller.payTo.address, 40_000n);
    await report(seller, { tx_hash: direct, payer: buyer.address, amount: '40000' });
    assert.equal((await decided(seller, direct)).status, 'verified');
    assert.equal(await modeOf(seller, direct), 'direct');
    assert.equal((await payouts(seller)).accrued_usd, '0.3');
    assert.deepEqual([(await revenue(seller)).total_usd, (await revenue(seller)).count], ['0.34', 2]);

    // What the platform collected goes to the seller, once, within what the wallet took.
    const flushed = await flush(seller);
    assert.equal(flushed.status, 200, JSON.stringify(flushed.body));
    assert.deepEqual(
      flushed.body.flushes.map((f: { status: string; amount_usd: string }) => [f.status, f.amount_usd]),
      [['settled', '0.3']],
    );
    assert.deepEqual(await collection(seller), ['300000', '300000']);
    assert.deepEqual([(await flush(seller)).body.error_code], ['payouts_not_applicable']);
  });

  it('direct → platform_mor: a payment to the pay-to reported after the switch is revenue, never collected or owed', async () => {
    const seller = await newProvenSeller(t, session, 'Joined MoR', 'direct');
    assert.equal(await collectTo(seller), null);
    const buyer = anvilDevAccount(8);
    await fundFromFaucet(chain, buyer.address, '10');
    const paidDirect = await transfer(buyer, seller.payTo.address, 50_000n);
    await switchTo(seller, 'platform_mor');
    const wallet = (await collectTo(seller))!;
    assert.ok(wallet && wallet.toLowerCase() !== seller.payTo.address.toLowerCase());
    await report(seller, { tx_hash: paidDirect, payer: buyer.address, amount: '50000' });
    const row = await decided(seller, paidDirect);
    assert.deepEqual([row.status, row.reason], ['verified', null], 'the buyer paid the seller: revenue');
    assert.equal(await modeOf(seller, paidDirect), 'direct');
    assert.deepEqual(await collection(seller), ['0', '0'], 'the collection wallet never got it');
    assert.equal((await payouts(seller)).accrued_usd, '0', 'nothing is owed for it');

    // Paid to the collection wallet, as its terms now say: collected and owed.
    const collected = await transfer(buyer, wallet, 20_000n);
    await report(seller, { tx_hash: collected, payer: buyer.address, amount: '20000' });
    assert.equal((await decided(seller, collected)).status, 'verified');
    assert.equal(await modeOf(seller, collected), 'platform_mor');
    assert.deepEqual(await collection(seller), ['20000', '0']);
    assert.equal((await payouts(seller)).accrued_usd, '0.02');
    assert.equal((await revenue(seller)).total_usd, '0.07');
  });

  it("a payout to a pay-to two sellers proved is not the direct sibling's revenue (platform_payout)", async () => {
    const mor = await newProvenSeller(t, session, 'Paid Seller', 'platform_mor');
    const sibling = await newProvenSeller(t, session, 'Sibling', 'direct');
    // The sibling proves the platform_mor seller's pay-to too (its key signs for both).
    await provePayTo(t, session, sibling.seller_id, mor.payTo);
    const wallet = (await collectTo(mor))!;
    const buyer = anvilDevAccount(9);
    await fundFromFaucet(chain, buyer.address, '10');
    const paid = await transfer(buyer, wallet, 250_000n);
    await report(mor, { tx_hash: paid, payer: buyer.address, amount: '250000' });
    assert.equal((await decided(mor, paid)).status, 'verified');
    const flushed = await flush(mor);
    assert.equal(flushed.status, 200, JSON.stringify(flushed.body));
    const payout = flushed.body.flushes[0];
    assert.deepEqual([payout.status, payout.amount_usd], ['settled', '0.25'], JSON.stringify(payout));

    // The payout's transfer, collection wallet → the shared pay-to, reported as a sale by either seller.
    await report(sibling, { tx_hash: payout.tx_hash, payer: wallet, amount: '250000' });
    await report(mor, { tx_hash: payout.tx_hash, payer: wallet, amount: '250000' });
    const taken = await decided(sibling, payout.tx_hash);
    assert.deepEqual([taken.status, taken.reason], ['rejected', 'platform_payout']);
    const own = await decided(mor, payout.tx_hash);
    assert.deepEqual([own.status, own.reason], ['rejected', 'self_payment']);
    const rev = await revenue(sibling);
    assert.deepEqual([rev.total_usd, rev.count, rev.rejected.count], ['0', 0, 1]);
    assert.equal((await revenue(mor)).total_usd, '0.25', 'only the buyer paid');
    assert.equal((await payouts(mor)).accrued_usd, '0');
  });
});
