/**
 * x402 end to end with nothing faked: real anvil with the EIP-3009 test USDC, the local facilitator built
 * on the official @x402/core + @x402/evm packages, Treasury (PostgreSQL + SoftHSM) as the seller platform,
 * and our Koa middleware in front of a seller app.
 * - The official @x402/fetch client pays our Koa seller: 402 → paid retry → 200; balances move by exactly
 *   the price; the receipt decodes with the official decoder; the ledger row carries tx_hash and
 *   content_hash = sha256(body), and Treasury verifies it on chain against the seller's proven pay-to.
 * - Two concurrent requests carrying the same payment header settle at most once.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import Koa from 'koa';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { x402Koa } from 'treasury/koa';
import { startTestTreasury, type TestTreasury } from '../support/api-harness.js';
import { anvilDevAccount, fundFromFaucet, readTokenBalance, startTestChain } from '../support/chain-harness.js';
import { provePayTo, waitForLedgerRow } from '../support/seller-pay-to.js';
import { signInWithNewKey } from '../support/sign-in.js';

describe('x402 end to end: official client → our Koa seller → local facilitator → anvil', function () {
  this.timeout(180_000);
  let chain: Awaited<ReturnType<typeof startTestChain>>;
  let t: TestTreasury;
  let seller: { seller_id: string; pat: string };
  let session: string;
  let server: http.Server;
  let sellerUrl: string;
  const payToAccount = privateKeyToAccount(generatePrivateKey());
  const payTo = payToAccount.address;
  const BODY = JSON.stringify({ report: 'quarterly', rows: [1, 2, 3] });

  before(async () => {
    chain = await startTestChain();
    t = await startTestTreasury({ extraEnv: { TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': chain.rpcUrl }) } });
    session = (await signInWithNewKey(t)).session;
    seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Reports', slug: 'reports' } }))
      .body;
    await provePayTo(t, session, seller.seller_id, payToAccount);
    const ep = await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
      token: seller.pat,
      body: { path: '/report', method: 'GET', price: '0.01' },
    });
    assert.equal(ep.status, 201, JSON.stringify(ep.body));

    const app = new Koa();
    app.use(
      x402Koa({
        token: seller.pat,
        price: '0.01',
        pay_to: payTo,
        facilitator_url: chain.facilitatorUrl,
        api_url: t.baseUrl,
        env: {},
      }),
    );
    app.use((ctx) => {
      ctx.type = 'application/json';
      ctx.body = BODY;
    });
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    sellerUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await t?.stop();
    await chain?.stop();
  });

  function officialBuyer(privateKey: `0x${string}`) {
    const client = new x402Client().register('eip155:84532', new ExactEvmScheme(privateKeyToAccount(privateKey)));
    return { client, pay: wrapFetchWithPayment(fetch, client) };
  }

  it('the official @x402/fetch client pays our Koa seller; balances move by exactly the price; the ledger has it', async () => {
    const buyer = anvilDevAccount(5);
    await fundFromFaucet(chain, buyer.address, '1');
    const [buyerBefore, sellerBefore] = [
      await readTokenBalance(chain, buyer.address),
      await readTokenBalance(chain, payTo),
    ];

    const unpaid = await fetch(`${sellerUrl}/report`);
    assert.equal(unpaid.status, 402);
    assert.ok(unpaid.headers.get('payment-required') && unpaid.headers.get('x-payment-required'));

    const { client, pay } = officialBuyer(buyer.privateKey);
    const res = await pay(`${sellerUrl}/report`);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.equal(text, BODY);
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(receipt.success, true);
    assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/);
    assert.equal(receipt.network, 'eip155:84532');
    assert.equal(
      new x402HTTPClient(client).getPaymentSettleResponse((n) => res.headers.get(n)).transaction,
      receipt.transaction,
    );
    const mined = await chain.publicClient.getTransactionReceipt({ hash: receipt.transaction as `0x${string}` });
    assert.equal(mined.status, 'success');

    assert.equal(await readTokenBalance(chain, buyer.address), buyerBefore - 10_000n);
    assert.equal(await readTokenBalance(chain, payTo), sellerBefore + 10_000n);

    // The ledger report is best-effort and asynchronous: wait for it.
    let rows: Array<{ tx_hash: string; content_hash: string; amount_usd?: string; endpoint_id: string }> = [];
    for (let i = 0; i < 50 && rows.length === 0; i++) {
      rows = (await t.request('GET', '/v1/ledger', { token: seller.pat })).body.entries;
      if (rows.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    const row = rows.find((r) => r.tx_hash.toLowerCase() === receipt.transaction.toLowerCase());
    assert.ok(row, `ledger row for ${receipt.transaction}: ${JSON.stringify(rows)}`);
    assert.equal(row.content_hash, createHash('sha256').update(BODY).digest('hex'));
    assert.match(row.endpoint_id, /^ep_/);
    // Checked on chain in the background: the transfer paid the seller's proven pay-to, so the row counts.
    const verified = await waitForLedgerRow(t, seller.pat, receipt.transaction, (r) => r.status !== 'pending');
    assert.deepEqual([verified.status, verified.reason], ['verified', null]);
    const revenue = await t.request('GET', '/v1/ledger/revenue', { token: seller.pat });
    assert.deepEqual([revenue.body.total_usd, revenue.body.count], ['0.01', 1]);
  });

  it('two concurrent requests with the same payment header settle at most once', async () => {
    const buyer = anvilDevAccount(6);
    await fundFromFaucet(chain, buyer.address, '1');
    const before = await readTokenBalance(chain, buyer.address);
    const { client } = officialBuyer(buyer.privateKey);
    const httpClient = new x402HTTPClient(client);
    const challenge = await fetch(`${sellerUrl}/report`);
    const required = httpClient.getPaymentRequiredResponse((n) => challenge.headers.get(n), await challenge.json());
    const payload = await httpClient.createPaymentPayload(required);
    const headers = httpClient.encodePaymentSignatureHeader(payload);
    const results = await Promise.all([
      fetch(`${sellerUrl}/report`, { headers }),
      fetch(`${sellerUrl}/report`, { headers }),
    ]);
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 402]);
    const loser = results.find((r) => r.status === 402)!;
    assert.ok(!(await loser.text()).includes('quarterly'), 'the unpaid one never sees the body');
    assert.equal(await readTokenBalance(chain, buyer.address), before - 10_000n, 'moved once');
  });
});
