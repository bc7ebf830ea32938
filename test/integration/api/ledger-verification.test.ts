/**
 * Seller revenue is what the chain shows, not what the seller says (docs/adr/0009-ledger-verification.md):
 * through HTTP against a real anvil with the EIP-3009 test USDC and real transfers, with 2 confirmations
 * required on the chain and a transaction the RPC does not know rejected at once.
 * - A made-up tx hash never accrues payables or revenue and is rejected (transaction_not_found).
 * - Seller B reporting seller A's real transfer first does not take it: B's row is rejected
 *   (recipient_mismatch), A's report still lands, waits for its depth, verifies and counts.
 * - Amount, payer and a reverted receipt each reject the row with their reason.
 * - A seller paying itself — from its own proven pay-to to itself, or to its collection wallet — is rejected
 *   (self_payment) and adds no revenue and no paid call, whatever the payout mode.
 * - A network with no RPC (or no chain) configured stays pending and says why.
 * - A direct seller without a proven pay-to address waits, and verifies once it proves one; a signature by
 *   another key proves nothing, nor does the signature anyone can make for a Solana address of small order.
 *   platform_mor sellers' buyers pay their collection wallet (docs/adr/0011).
 * - A flush pays out verified rows only (recorded here as pending payouts: no facilitator is configured).
 * - The verifier's outcomes and the pending rows show in /metrics.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { payToClaimMessage } from '../../../src/api/sellers/seller-pay-to-service.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import {
  anvilDevAccount,
  fundFromFaucet,
  startTestChain,
  type DevAccount,
  type TestChain,
  transferUsdc,
} from '../../support/chain-harness.js';
import { mineBlocks, provePayTo, waitForLedgerRow } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const NO_RPC_NETWORK = 'eip155:31338';

describe('seller ledger rows verified on chain before they count (HTTP, PostgreSQL, anvil)', function () {
  this.timeout(180_000);
  let chain: TestChain;
  let t: TestTreasury;
  let session: string;
  const buyer = anvilDevAccount(7);
  const sellers: Record<
    'a' | 'b' | 'c' | 'd',
    { seller_id: string; pat: string; payTo: ReturnType<typeof privateKeyToAccount>; collect: Address }
  > = {} as never;

  /**
   * A platform_mor seller's buyers pay its collection wallet (what POST /v1/auth/verify names for the network);
   * a direct seller's (c) its proven pay-to.
   */
  const newSeller = async (name: string, payoutMode: 'direct' | 'platform_mor' = 'platform_mor') => {
    const created = (
      await t.request('POST', '/v1/sellers', { token: session, body: { name, payout_mode: payoutMode } })
    ).body;
    const payTo = privateKeyToAccount(generatePrivateKey());
    const verified = await t.request('POST', '/v1/auth/verify', {
      token: created.pat,
      body: { network: chain.network },
    });
    return {
      seller_id: created.seller_id as string,
      pat: created.pat as string,
      payTo,
      collect: (verified.body.collect_to ?? payTo.address) as Address,
    };
  };
  const report = (
    seller: { pat: string },
    body: { tx_hash: string; payer?: string; amount: string; network?: string },
  ) =>
    t.request('POST', '/v1/ledger', {
      token: seller.pat,
      body: { payer: buyer.address, network: chain.network, ...body },
    });
  const accrued = async (seller: { seller_id: string; pat: string }) =>
    (await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts`, { token: seller.pat })).body
      .accrued_usd as string;
  const revenue = async (seller: { pat: string }) =>
    (await t.request('GET', '/v1/ledger/revenue', { token: seller.pat })).body;
  const transfer = (from: DevAccount, to: Address, amount: bigint, gas?: bigint): Promise<Hex> =>
    transferUsdc(chain, from, to, amount, gas);
  const fakeHash = () => `0x${randomBytes(32).toString('hex')}`;

  before(async () => {
    chain = await startTestChain();
    t = await startTestTreasury({
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ [chain.network]: chain.rpcUrl }),
        TREASURY_LEDGER_CONFIRMATIONS: JSON.stringify({ [chain.network]: 2 }),
        TREASURY_LEDGER_NOT_FOUND_GRACE_SECONDS: '0',
        TREASURY_LEDGER_VERIFY_INTERVAL_MS: '100',
        TREASURY_EXTRA_CHAINS: JSON.stringify([
          {
            name: 'no-rpc',
            network: NO_RPC_NETWORK,
            usdc: '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238',
            usdc_name: 'USDC',
            usdc_version: '2',
          },
        ]),
      },
    });
    session = (await signInWithNewKey(t)).session;
    for (const key of ['a', 'b', 'd'] as const) sellers[key] = await newSeller(`Seller ${key}`);
    sellers.c = await newSeller('Seller c', 'direct');
    await fundFromFaucet(chain, buyer.address, '10');
  });
  after(async () => {
    await t?.stop();
    await chain?.stop();
  });

  it("a seller proves its pay-to address with that address's signature; another key's signature proves nothing", async () => {
    const { a, b, d } = sellers;
    const intruder = privateKeyToAccount(generatePrivateKey());
    const forged = await t.request('POST', `/v1/sellers/${b.seller_id}/pay-to`, {
      token: session,
      body: {
        address: a.payTo.address,
        signature: await intruder.signMessage({ message: payToClaimMessage(b.seller_id, a.payTo.address) }),
      },
    });
    assert.deepEqual(
      [forged.status, forged.body.error_code],
      [422, 'pay_to_signature_invalid'],
      JSON.stringify(forged.body),
    );
    // A's own signature for A does not prove the address for B either (the message names the seller).
    const replayed = await t.request('POST', `/v1/sellers/${b.seller_id}/pay-to`, {
      token: session,
      body: {
        address: a.payTo.address,
        signature: await a.payTo.signMessage({ message: payToClaimMessage(a.seller_id, a.payTo.address) }),
      },
    });
    assert.equal(replayed.body.error_code, 'pay_to_signature_invalid');
    const byPat = await t.request('POST', `/v1/sellers/${a.seller_id}/pay-to`, {
      token: a.pat,
      body: {
        address: a.payTo.address,
        signature: await a.payTo.signMessage({ message: payToClaimMessage(a.seller_id, a.payTo.address) }),
      },
    });
    assert.equal(byPat.status, 403, "where revenue goes is the owner session's decision");
    // Solana addresses of small order (all-zero bytes, the identity point) are held by nobody: the signature anyone
    // can make for them (R = identity, S = 0), valid for any message under lenient ZIP-215 rules, proves nothing.
    const anyMessage = '2AFv15MNPuA84RmU66xw2uMzGipcVxNpzAffoacGVvjFue3CBmf633fAWuiP9cwL9C3z3CJiGgRSFjJfeEcA6QX';
    for (const address of ['11111111111111111111111111111111', '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM']) {
      const nobody = await t.request('POST', `/v1/sellers/${b.seller_id}/pay-to`, {
        token: session,
        body: { address, signature: anyMessage },
      });
      assert.deepEqual([nobody.status, nobody.body.error_code], [422, 'pay_to_signature_invalid'], address);
    }
    for (const s of [a, b, d]) await provePayTo(t, session, s.seller_id, s.payTo);
    const listed = await t.request('GET', `/v1/sellers/${a.seller_id}/pay-to`, { token: a.pat });
    assert.deepEqual(
      listed.body.pay_to.map((p: { address: string }) => p.address),
      [a.payTo.address],
    );
  });

  it('a made-up tx hash never accrues payables or revenue, and is rejected (transaction_not_found)', async () => {
    const { a } = sellers;
    const fake = fakeHash();
    const res = await report(a, { tx_hash: fake, amount: '250000' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(await accrued(a), '0', 'a reported row accrues nothing by itself');
    assert.equal((await revenue(a)).total_usd, '0');
    assert.equal(res.body.status, 'pending');
    const row = await waitForLedgerRow(t, a.pat, fake, (r) => r.status !== 'pending');
    assert.deepEqual([row.status, row.reason], ['rejected', 'transaction_not_found']);
    assert.equal(await accrued(a), '0');
    assert.deepEqual((await revenue(a)).rejected, { count: 1, total_usd: '0.25' });
  });

  it("seller B reporting seller A's real transfer first does not take it: B is rejected, A verifies and counts", async () => {
    const { a, b } = sellers;
    const tx = await transfer(buyer, a.collect, 250_000n);
    const first = await report(b, { tx_hash: tx, amount: '250000' });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const rightful = await report(a, { tx_hash: tx, amount: '250000' });
    assert.equal(rightful.status, 201, `the rightful seller's report is not blocked: ${JSON.stringify(rightful.body)}`);
    // One block so far: not as deep as required, nothing counts yet.
    const shallow = await waitForLedgerRow(t, a.pat, tx, (r) => r.reason === 'awaiting_confirmations');
    assert.deepEqual([shallow.status, shallow.confirmations], ['pending', 1]);
    assert.equal(await accrued(a), '0');

    await mineBlocks(chain.rpcUrl, 1);
    const verified = await waitForLedgerRow(t, a.pat, tx, (r) => r.status !== 'pending');
    assert.deepEqual([verified.status, verified.reason, verified.confirmations], ['verified', null, 2]);
    const stolen = await waitForLedgerRow(t, b.pat, tx, (r) => r.status !== 'pending');
    assert.deepEqual([stolen.status, stolen.reason], ['rejected', 'recipient_mismatch']);
    assert.equal(await accrued(a), '0.25');
    assert.equal(await accrued(b), '0');
    const revA = await revenue(a);
    assert.deepEqual([revA.total_usd, revA.count, revA.pending.count], ['0.25', 1, 0]);
    const revB = await revenue(b);
    assert.deepEqual([revB.total_usd, revB.count, revB.rejected.count], ['0', 0, 1]);
    // Reported again by A: the same row, still verified, counted once.
    const again = await report(a, { tx_hash: tx, amount: '250000' });
    assert.deepEqual([again.status, again.body.duplicate, again.body.status], [200, true, 'verified']);
    assert.equal(await accrued(a), '0.25');
  });

  it('the amount, the payer and a successful receipt must match: each mismatch is rejected with its reason', async () => {
    const { a } = sellers;
    const before = await accrued(a);
    const poor = anvilDevAccount(8); // holds no test USDC: its transfer reverts
    const [overstated, wrongPayer, reverted] = [
      await transfer(buyer, a.collect, 100_000n),
      await transfer(buyer, a.collect, 100_000n),
      await transfer(poor, a.collect, 1_000_000n, 100_000n),
    ];
    assert.equal((await chain.publicClient.getTransactionReceipt({ hash: reverted })).status, 'reverted');
    for (const [tx, body] of [
      [overstated, { amount: '200000' }],
      [wrongPayer, { amount: '100000', payer: anvilDevAccount(9).address }],
      [reverted, { amount: '1000000', payer: poor.address }],
    ] as const) {
      assert.equal((await report(a, { tx_hash: tx, ...body })).status, 201);
    }
    await mineBlocks(chain.rpcUrl, 1);
    const outcomes = [];
    for (const tx of [overstated, wrongPayer, reverted])
      outcomes.push((await waitForLedgerRow(t, a.pat, tx, (r) => r.status !== 'pending')).reason);
    assert.deepEqual(outcomes, ['amount_mismatch', 'payer_mismatch', 'transaction_reverted']);
    assert.equal(await accrued(a), before, 'nothing accrued');
  });

  it('a seller paying itself (own pay-to to itself, or to its collection wallet) is rejected: self_payment', async () => {
    const direct = {
      ...(await newSeller('Seller e', 'direct')),
      payTo: privateKeyToAccount(anvilDevAccount(6).privateKey),
    };
    const mor = { ...(await newSeller('Seller f')), payTo: privateKeyToAccount(anvilDevAccount(5).privateKey) };
    for (const s of [direct, mor]) {
      await provePayTo(t, session, s.seller_id, s.payTo);
      await fundFromFaucet(chain, s.payTo.address, '1');
    }
    const [e, f] = [anvilDevAccount(6), anvilDevAccount(5)];
    const loops = [await transfer(e, e.address, 1_000_000n), await transfer(e, e.address, 1_000_000n)];
    const intoCollection = await transfer(f, mor.collect, 1_000_000n);
    const bought = await transfer(buyer, direct.payTo.address, 40_000n);
    await mineBlocks(chain.rpcUrl, 1);
    for (const tx of loops)
      assert.equal((await report(direct, { tx_hash: tx, payer: e.address, amount: '1000000' })).status, 201);
    assert.equal((await report(mor, { tx_hash: intoCollection, payer: f.address, amount: '1000000' })).status, 201);
    assert.equal((await report(direct, { tx_hash: bought, amount: '40000' })).status, 201);
    for (const [seller, tx] of [...loops.map((tx) => [direct, tx] as const), [mor, intoCollection] as const]) {
      const row = await waitForLedgerRow(t, seller.pat, tx, (r) => r.status !== 'pending');
      assert.deepEqual([row.status, row.reason], ['rejected', 'self_payment'], tx);
    }
    assert.equal((await waitForLedgerRow(t, direct.pat, bought, (r) => r.status !== 'pending')).status, 'verified');
    const revDirect = await revenue(direct);
    assert.deepEqual(
      [revDirect.total_usd, revDirect.count, revDirect.rejected],
      ['0.04', 1, { count: 2, total_usd: '2' }],
      "only the buyer's payment counts",
    );
    const revMor = await revenue(mor);
    assert.deepEqual([revMor.total_usd, revMor.count], ['0', 0]);
    assert.equal(await accrued(mor), '0', 'nothing is owed for money the seller moved to itself');
  });

  it('a network without an RPC stays pending and says why; so does a network Treasury does not know', async () => {
    const { a } = sellers;
    const noRpc = await report(a, { tx_hash: fakeHash(), amount: '1000', network: NO_RPC_NETWORK });
    assert.equal(noRpc.status, 201, JSON.stringify(noRpc.body));
    assert.deepEqual([noRpc.body.status, noRpc.body.reason], ['pending', 'rpc_not_configured']);
    const unknown = await report(a, { tx_hash: fakeHash(), amount: '1000', network: 'eip155:999999' });
    assert.deepEqual([unknown.body.status, unknown.body.reason], ['pending', 'network_not_supported']);
    await new Promise((r) => setTimeout(r, 600)); // several verifier rounds
    for (const [res, reason] of [
      [noRpc, 'rpc_not_configured'],
      [unknown, 'network_not_supported'],
    ] as const) {
      const row = await waitForLedgerRow(t, a.pat, res.body.tx_hash, () => true);
      assert.deepEqual([row.status, row.reason], ['pending', reason]);
    }
    const pending = await t.request('GET', '/v1/ledger?status=pending', { token: a.pat });
    assert.ok(
      pending.body.entries.every((e: { status: string }) => e.status === 'pending') && pending.body.entries.length >= 2,
    );
  });

  it('a direct seller without a proven pay-to waits (pay_to_not_registered) and verifies once it proves one', async () => {
    const { c } = sellers;
    const tx = await transfer(buyer, c.payTo.address, 50_000n);
    await mineBlocks(chain.rpcUrl, 1);
    const res = await report(c, { tx_hash: tx, amount: '50000' });
    assert.deepEqual([res.body.status, res.body.reason], ['pending', 'pay_to_not_registered']);
    assert.equal((await revenue(c)).total_usd, '0');
    await provePayTo(t, session, c.seller_id, c.payTo);
    const row = await waitForLedgerRow(t, c.pat, tx, (r) => r.status !== 'pending');
    assert.equal(row.status, 'verified');
    assert.equal((await revenue(c)).total_usd, '0.05');
    assert.equal(await accrued(c), '0', 'a direct seller is paid by its buyers: nothing is owed');
  });

  it('a flush pays out verified rows only; a row verified later is paid by the next flush', async () => {
    const { d } = sellers;
    const settled = await transfer(buyer, d.collect, 300_000n);
    await mineBlocks(chain.rpcUrl, 1);
    await report(d, { tx_hash: settled, amount: '300000' });
    await waitForLedgerRow(t, d.pat, settled, (r) => r.status === 'verified');
    const fresh = await transfer(buyer, d.collect, 70_000n);
    await report(d, { tx_hash: fresh, amount: '70000' });
    const fake = fakeHash();
    await report(d, { tx_hash: fake, amount: '999999' });
    await waitForLedgerRow(t, d.pat, fresh, (r) => r.reason === 'awaiting_confirmations');
    // The made-up row is pending until the verifier has looked at it once (it may not have, on a loaded
    // machine); once rejected it is neither paid nor pending.
    const rejected = await waitForLedgerRow(t, d.pat, fake, (r) => r.status !== 'pending');
    assert.equal(rejected.status, 'rejected');

    const flushed = await t.request('POST', `/v1/sellers/${d.seller_id}/payouts/flush`, { token: session });
    assert.equal(flushed.status, 200, JSON.stringify(flushed.body));
    assert.deepEqual(
      [flushed.body.flushes.length, flushed.body.flushes[0].amount_usd, flushed.body.accrued_usd],
      [1, '0.3', '0'],
    );
    assert.equal(flushed.body.pending_usd, '0.07', 'the unconfirmed transfer is shown as pending, not paid');

    await mineBlocks(chain.rpcUrl, 1);
    await waitForLedgerRow(t, d.pat, fresh, (r) => r.status === 'verified');
    const second = await t.request('POST', `/v1/sellers/${d.seller_id}/payouts/flush`, { token: session });
    assert.deepEqual(
      second.body.flushes.map((f: { amount_usd: string }) => f.amount_usd),
      ['0.07', '0.3'],
    );
    const paid = (await t.db.knex('payout_flushes').where({ seller_id: d.seller_id }).sum({ s: 'amount_micro' }))[0]!.s;
    assert.equal(String(paid), '370000', 'the made-up row was never paid');
  });

  it("the verifier's outcomes and pending rows show in /metrics", async () => {
    const metrics = String((await t.request('GET', '/metrics')).body);
    const sample = (name: string) =>
      metrics
        .split('\n')
        .find((line) => line.startsWith(`${name} `))
        ?.slice(name.length + 1);
    for (const outcome of ['verified', 'rejected', 'pending'])
      assert.ok(Number(sample(`treasury_ledger_verifications_total{outcome="${outcome}"}`)) > 0, outcome);
    assert.ok(Number(sample('treasury_ledger_pending_rows')) >= 2, 'the rows without an RPC are pending');
  });
});
