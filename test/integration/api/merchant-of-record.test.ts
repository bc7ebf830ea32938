/**
 * The merchant-of-record money flow over HTTP against a real anvil, the EIP-3009 test USDC, the local x402
 * facilitator, SoftHSM and PostgreSQL (docs/adr/0011-merchant-of-record.md):
 * - a platform_mor seller moving its own USDC between its own addresses is owed nothing;
 * - its buyers pay a collection wallet Treasury holds for it (the 402 terms say so), and only money that
 *   reached that wallet is owed: a transfer to the seller's own pay-to is a direct row (revenue, owed nothing),
 *   whatever the seller's mode (test/integration/api/ledger-recipient-mode.test.ts);
 * - a flush is a real USDC transfer out of that wallet to the seller's proven pay-to, with its transaction on
 *   the payout, once per Idempotency-Key and never above what the wallet collected;
 * - a direct seller is never owed anything (but what its collection wallet took while it was platform_mor);
 * - the gate's catalogue names the collection wallet on the gate's network.
 * The nonce link of a ledger row: test/integration/api/ledger-authorization-link.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tokenTransfers } from '../../../src/api/chain/token-transfers.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import {
  anvilDevAccount,
  fundFromFaucet,
  readTokenBalance,
  startTestChain,
  type DevAccount,
  type TestChain,
  transferUsdc,
} from '../../support/chain-harness.js';
import { newProvenSeller, provePayTo, type ProvenSeller, waitForLedgerRow } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe('the merchant-of-record money flow (HTTP, PostgreSQL, SoftHSM, anvil, facilitator)', function () {
  this.timeout(240_000);
  let chain: TestChain;
  let t: TestTreasury;
  let session: string;
  type Seller = ProvenSeller;
  const newSeller = (name: string, payoutMode: 'direct' | 'platform_mor'): Promise<Seller> =>
    newProvenSeller(t, session, name, payoutMode);
  /** Where the seller's paywall tells buyers to pay on the test network (POST /v1/auth/verify). */
  const collectTo = async (seller: Seller) => {
    const res = await t.request('POST', '/v1/auth/verify', { token: seller.pat, body: { network: chain.network } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.collect_to as Address | null;
  };
  const transfer = (from: DevAccount, to: Address, amount: bigint): Promise<Hex> =>
    transferUsdc(chain, from, to, amount);
  const report = (seller: Seller, body: { tx_hash: string; payer: string; amount: string; nonce?: string }) =>
    t.request('POST', '/v1/ledger', { token: seller.pat, body: { network: chain.network, ...body } });
  const payouts = async (seller: Seller) =>
    (await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts`, { token: seller.pat })).body;
  const flush = (seller: Seller, key?: string) =>
    t.request('POST', `/v1/sellers/${seller.seller_id}/payouts/flush`, {
      token: session,
      ...(key ? { headers: { 'idempotency-key': key } } : {}),
    });

  /**
   * The facilitator the API settles payouts with, behind a loopback relay that can lose an answer: `lose`
   * forwards the next /settle (the transfer is mined) and cuts the connection before the answer comes back.
   */
  let relayMode: 'pass' | 'lose' = 'pass';
  let relay: Server;
  const startRelay = async (target: string) => {
    relay = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const lose = relayMode === 'lose' && req.url === '/settle';
        if (lose) relayMode = 'pass';
        const answer = await fetch(target + req.url, {
          method: req.method ?? 'GET',
          headers: { 'content-type': 'application/json' },
          ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
        });
        const body = await answer.text();
        if (lose) return req.socket.destroy();
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  };

  before(async () => {
    chain = await startTestChain();
    const facilitatorUrl = await startRelay(chain.facilitatorUrl);
    t = await startTestTreasury({
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ [chain.network]: chain.rpcUrl }),
        TREASURY_LEDGER_NOT_FOUND_GRACE_SECONDS: '0',
        TREASURY_LEDGER_VERIFY_INTERVAL_MS: '100',
        TREASURY_FACILITATOR_URL: facilitatorUrl,
        // The operator's choice: collect on the test network only (by default: the default chain's and every
        // network with an RPC endpoint).
        TREASURY_MOR_NETWORKS: chain.network,
      },
    });
    session = (await signInWithNewKey(t)).session;
  });
  after(async () => {
    await t?.stop();
    relay?.closeAllConnections();
    await new Promise((resolve) => (relay ? relay.close(resolve) : resolve(undefined)));
    await chain?.stop();
  });

  it('a platform_mor seller moving its own USDC between its own addresses three times is owed nothing', async () => {
    const seller = await newSeller('Self Dealer', 'platform_mor');
    const own = anvilDevAccount(3);
    await fundFromFaucet(chain, own.address, '300');
    const hashes: Hex[] = [];
    for (let i = 0; i < 3; i++) hashes.push(await transfer(own, seller.payTo.address, 100_000_000n));
    for (const tx of hashes)
      assert.equal((await report(seller, { tx_hash: tx, payer: own.address, amount: '100000000' })).status, 201);
    // The chain shows transfers to its pay-to from an address it never proved: direct rows, as they would be in
    // direct mode (revenue: on chain that address is any buyer), never owed — the platform never got them.
    for (const tx of hashes) {
      const row = await waitForLedgerRow(t, seller.pat, tx, (r) => r.status !== 'pending');
      assert.deepEqual([row.status, row.reason], ['verified', null]);
      const stored = await t.db.knex('ledger_entries').where({ id: row.id }).first('payout_mode');
      assert.equal(stored.payout_mode, 'direct', 'the platform never got it');
    }
    assert.equal((await payouts(seller)).accrued_usd, '0');
    const flushed = await flush(seller);
    assert.equal(flushed.status, 200, JSON.stringify(flushed.body));
    assert.deepEqual([flushed.body.flushes, flushed.body.accrued_usd], [[], '0'], 'a flush pays nothing');
  });

  it("a buyer paying the seller's collection wallet (named by its 402 terms) makes the seller owed", async () => {
    const seller = await newSeller('Collected', 'platform_mor');
    const collection = await collectTo(seller);
    assert.ok(collection && collection.toLowerCase() !== seller.payTo.address.toLowerCase(), String(collection));
    assert.equal(await collectTo(seller), collection, 'one collection wallet per seller and network');
    // A wallet of the platform's own account, its key in the HSM, with its own policy and audit chain.
    const wallet = await t.db
      .knex('platform_collection_wallets as c')
      .join('wallets as w', 'w.id', 'c.wallet_id')
      .join('treasury_accounts as a', 'a.id', 'w.account_id')
      .where({ 'c.seller_id': seller.seller_id })
      .first('w.id', 'w.address', 'w.policy', 'a.owner_type');
    assert.deepEqual([wallet.address, wallet.owner_type], [collection, 'platform']);
    assert.deepEqual(wallet.policy, { per_tx_cap_usd: '100' });
    const audit = await t.db.knex('audit_events').where({ chain_key: wallet.id }).pluck('event_type');
    assert.deepEqual(audit, ['wallet.created']);

    const buyer = anvilDevAccount(7);
    await fundFromFaucet(chain, buyer.address, '10');
    const paid = await transfer(buyer, collection, 250_000n);
    await report(seller, { tx_hash: paid, payer: buyer.address, amount: '250000' });
    const row = await waitForLedgerRow(t, seller.pat, paid, (r) => r.status !== 'pending');
    assert.deepEqual([row.status, row.reason], ['verified', null]);
    assert.equal((await payouts(seller)).accrued_usd, '0.25');
    // Paid to the seller's own address instead: the seller's revenue (a direct row), owed nothing.
    const around = await transfer(buyer, seller.payTo.address, 40_000n);
    await report(seller, { tx_hash: around, payer: buyer.address, amount: '40000' });
    const direct = await waitForLedgerRow(t, seller.pat, around, (r) => r.status !== 'pending');
    assert.deepEqual([direct.status, direct.reason], ['verified', null]);
    assert.equal((await payouts(seller)).accrued_usd, '0.25');
    const collected = await t.db.knex('platform_collection_wallets').where({ seller_id: seller.seller_id }).first();
    assert.equal(String(collected.collected_micro), '250000', 'what reached the collection wallet, no more');
  });

  it('a flush is one on-chain USDC transfer to the proven pay-to, idempotent on retry, within what was collected', async () => {
    const seller = await newSeller('Paid Out', 'platform_mor');
    const collection = (await collectTo(seller))!;
    const buyer = anvilDevAccount(8);
    await fundFromFaucet(chain, buyer.address, '10');
    const paid = await transfer(buyer, collection, 700_000n);
    await report(seller, { tx_hash: paid, payer: buyer.address, amount: '700000' });
    await waitForLedgerRow(t, seller.pat, paid, (r) => r.status === 'verified');
    const before = await readTokenBalance(chain, seller.payTo.address);
    // A Solana pay-to proven before the EVM one (a fixture row, older than it) cannot receive an EVM payout.
    await t.db.knex('sellers_pay_to').insert({
      seller_id: seller.seller_id,
      address: 'BPFLoaderUpgradeab1e11111111111111111111111',
      signature: 'fixture',
      created_at: new Date(0),
    });

    const first = await flush(seller, 'flush-1');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.flushes.length, 1);
    const payout = first.body.flushes[0];
    assert.deepEqual(
      [payout.status, payout.amount_usd, payout.pay_to, payout.network, first.body.accrued_usd],
      ['settled', '0.7', seller.payTo.address, chain.network, '0'],
      JSON.stringify(payout),
    );
    assert.equal(await readTokenBalance(chain, seller.payTo.address), before + 700_000n);
    assert.equal(await readTokenBalance(chain, collection), 0n);
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: payout.tx_hash });
    const moved = tokenTransfers(receipt.logs, chain.usdc).map(({ from, to, value }) => ({ from, to, value }));
    assert.deepEqual(moved, [{ from: collection, to: seller.payTo.address, value: 700_000n }]);

    // Retried with its key, and again without: nothing more is paid.
    const retried = await flush(seller, 'flush-1');
    const again = await flush(seller);
    for (const r of [retried, again]) assert.deepEqual(r.body.flushes, [payout]);
    assert.equal(await readTokenBalance(chain, seller.payTo.address), before + 700_000n);
    // The collection wallet signed it through the pay path: an authorization and its audit row.
    const wallet = await t.db.knex('platform_collection_wallets').where({ seller_id: seller.seller_id }).first();
    const auths = await t.db.knex('authorizations').where({ wallet_id: wallet.wallet_id }).select('to_address');
    assert.deepEqual(
      auths.map((a: { to_address: string }) => a.to_address.trim().toLowerCase()),
      [seller.payTo.address.toLowerCase()],
    );
    const audited = await t.db.knex('audit_events').where({ chain_key: wallet.wallet_id }).pluck('event_type');
    assert.ok(audited.length >= 2 && audited[0] === 'wallet.created', JSON.stringify(audited));
    // PostgreSQL refuses a payout above what the wallet collected, whoever writes it.
    await assert.rejects(
      t.db.knex('payout_flushes').insert({
        id: 'po_above_collected_0001',
        seller_id: seller.seller_id,
        amount_micro: '1',
        created_by: 'test',
        created_at: new Date(),
        status: 'pending',
        network: chain.network,
        wallet_id: wallet.wallet_id,
      }),
      /platform_collection_paid_within_collected|seller_payables_paid_within_earned/,
    );
  });

  it('a payout whose settlement answer was lost is found on chain by the next flush: paid once, its transaction recorded', async () => {
    const seller = await newSeller('Lost Answer', 'platform_mor');
    const collection = (await collectTo(seller))!;
    const buyer = anvilDevAccount(6);
    await fundFromFaucet(chain, buyer.address, '1');
    const paid = await transfer(buyer, collection, 120_000n);
    await report(seller, { tx_hash: paid, payer: buyer.address, amount: '120000' });
    await waitForLedgerRow(t, seller.pat, paid, (r) => r.status === 'verified');
    const before = await readTokenBalance(chain, seller.payTo.address);

    relayMode = 'lose';
    const first = await flush(seller);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(
      [first.body.flushes[0].status, first.body.flushes[0].reason, first.body.flushes[0].tx_hash],
      ['submitted', 'facilitator_unavailable', null],
    );
    assert.equal(await readTokenBalance(chain, seller.payTo.address), before + 120_000n, 'mined all the same');

    const second = await flush(seller);
    assert.equal(second.body.flushes.length, 1, 'no second payout');
    const payout = second.body.flushes[0];
    assert.deepEqual([payout.status, payout.reason], ['settled', null]);
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: payout.tx_hash });
    assert.deepEqual(
      tokenTransfers(receipt.logs, chain.usdc).map(({ from, to, value }) => ({ from, to, value })),
      [{ from: collection, to: seller.payTo.address, value: 120_000n }],
    );
    assert.equal(await readTokenBalance(chain, seller.payTo.address), before + 120_000n, 'paid once');
    // A payout moves only forward, and its amount and wallet never change (the state machine's trigger).
    for (const change of [{ status: 'pending' }, { amount_micro: '1' }, { tx_hash: `0x${'0'.repeat(64)}` }])
      await assert.rejects(t.db.knex('payout_flushes').where({ id: payout.id }).update(change), /payout/);
  });

  it('a direct seller is never owed: its terms name its own pay-to, a flush is payouts_not_applicable', async () => {
    const seller = await newSeller('Direct', 'direct');
    assert.equal(await collectTo(seller), null);
    const buyer = anvilDevAccount(9);
    await fundFromFaucet(chain, buyer.address, '1');
    const paid = await transfer(buyer, seller.payTo.address, 30_000n);
    await report(seller, { tx_hash: paid, payer: buyer.address, amount: '30000' });
    await waitForLedgerRow(t, seller.pat, paid, (r) => r.status === 'verified');
    assert.equal((await payouts(seller)).accrued_usd, '0');
    const flushed = await flush(seller);
    assert.deepEqual([flushed.status, flushed.body.error_code], [409, 'payouts_not_applicable']);
  });

  it('a seller that goes back to direct is still paid what its collection wallet took while platform_mor', async () => {
    const seller = await newSeller('Switcher', 'platform_mor');
    const collection = (await collectTo(seller))!;
    const buyer = anvilDevAccount(5);
    await fundFromFaucet(chain, buyer.address, '1');
    const paid = await transfer(buyer, collection, 60_000n);
    await report(seller, { tx_hash: paid, payer: buyer.address, amount: '60000' });
    await waitForLedgerRow(t, seller.pat, paid, (r) => r.status === 'verified');
    const patched = await t.request('PATCH', `/v1/sellers/${seller.seller_id}`, {
      token: session,
      body: { payout_mode: 'direct' },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal((await payouts(seller)).accrued_usd, '0.06');
    const flushed = await flush(seller);
    assert.deepEqual(
      flushed.body.flushes.map((f: { status: string; amount_usd: string }) => [f.status, f.amount_usd]),
      [['settled', '0.06']],
    );
    const again = await flush(seller);
    assert.deepEqual([again.status, again.body.error_code], [409, 'payouts_not_applicable']);
  });

  it("the gate's catalogue names a platform_mor seller's collection wallet on the gate's network as its pay-to", async () => {
    const created = async (name: string, payoutMode: string) =>
      (
        await t.request('POST', '/v1/sellers', {
          token: session,
          body: { name, protocol: 'mpp', payout_mode: payoutMode, origin: 'http://127.0.0.1:9' },
        })
      ).body as { seller_id: string; pat: string };
    const mor = await created('Gate MoR', 'platform_mor');
    const direct = await created('Gate Direct', 'direct');
    const payTo = privateKeyToAccount(generatePrivateKey());
    for (const s of [mor, direct]) await provePayTo(t, session, s.seller_id, payTo);
    const gatePat = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'gate' } })).body.pat;
    const catalogue = await t.request('GET', `/v1/gate/catalogue?network=${chain.network}`, { token: gatePat });
    assert.equal(catalogue.status, 200, JSON.stringify(catalogue.body));
    const payToOf = (id: string) =>
      (catalogue.body.sellers as Array<{ seller_id: string; pay_to: string }>).find((s) => s.seller_id === id)?.pay_to;
    const collection = await t.db.knex('platform_collection_wallets').where({ seller_id: mor.seller_id }).first();
    assert.equal(payToOf(mor.seller_id)?.toLowerCase(), collection.address.trim());
    assert.equal(payToOf(direct.seller_id), payTo.address);
    const elsewhere = await t.request('GET', '/v1/gate/catalogue?network=eip155:8453', { token: gatePat });
    assert.equal(
      (elsewhere.body.sellers as Array<{ seller_id: string; pay_to: string | null }>).find(
        (s) => s.seller_id === mor.seller_id,
      )?.pay_to,
      null,
      'no collection on a network the platform does not collect on: the gate does not sell it',
    );
  });
});
