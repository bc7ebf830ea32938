/**
 * The buyer SDK end to end with nothing faked: real anvil with the EIP-3009 test USDC, the local facilitator
 * built on the official packages, Treasury (PostgreSQL + SoftHSM) holding the buyer's key.
 * - A Treasury-managed wallet, through createX402Buyer, pays an official @x402/express seller; balances move
 *   by exactly the price.
 * - It pays our Koa seller; the seller's ledger shows the payment with content_hash and tx_hash.
 * - A price above maxPriceUsd is InsufficientBudgetError: the on-chain balance, the authorizations, the
 *   policy decisions and the wallet's and PAT's spend totals are untouched.
 * - treasuryAccount (a viem custom account) used by the official @x402/fetch client pays our Koa seller.
 * - Treasury's answer to a pay lost on the way back: the buyer's retry (same Idempotency-Key) gets the
 *   recorded signature; one authorization, one spend, one transfer.
 * - The PAT's daily cap surfaces as PatCapReachedError with the settings link; no bearer is
 *   treasury_key_missing.
 * - A wallet holding less than the price: the seller's refusal becomes InsufficientFundsError with the
 *   fund_wallet recovery (shortfall, chain, EIP-681 deposit URI); nothing moved on chain.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { wrapFetchWithPayment } from '@x402/fetch';
import {
  createX402Buyer,
  InsufficientBudgetError,
  InsufficientFundsError,
  PatCapReachedError,
  isSolanaPayReply,
  treasuryAccount,
  TreasuryClient,
  TreasuryKeyMissingError,
  type X402Result,
} from 'treasury/sdk';
import { LoopbackServers } from '../support/loopback-servers.js';
import { startTestTreasury, type TestTreasury } from '../support/api-harness.js';
import { provePayTo } from '../support/seller-pay-to.js';
import { fundFromFaucet, readTokenBalance, startTestChain } from '../support/chain-harness.js';
import {
  agentBuyer,
  expressSeller,
  koaSeller,
  newAgentWallet,
  readBalances,
  type AgentBuyer,
} from '../support/x402-e2e-fixture.js';

const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';

describe('buyer SDK end to end: Treasury wallet → official and Koa sellers → local facilitator → anvil', function () {
  this.timeout(180_000);
  let chain: Awaited<ReturnType<typeof startTestChain>>;
  let t: TestTreasury;
  let agent: AgentBuyer;
  let seller: { seller_id: string; pat: string };
  let wallet: { id: string; address: `0x${string}` };
  const servers = new LoopbackServers();
  const payToExpress = privateKeyToAccount(generatePrivateKey()).address;
  // The Koa seller's pay-to, proven to the platform: its ledger rows are verified against it on chain.
  const payToKoaKey = privateKeyToAccount(generatePrivateKey());
  const payToKoa = payToKoaKey.address;
  let expressUrl: string;
  let koaUrl: string;
  const KOA_BODY = JSON.stringify({ forecast: 'sunny', days: [1, 2, 3] });

  before(async () => {
    chain = await startTestChain();
    t = await startTestTreasury({ extraEnv: { TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': chain.rpcUrl }) } });
    agent = await agentBuyer(t, { label: 'sdk buyer', daily_cap_usd: '0.04' });
    wallet = await newAgentWallet(t, agent.agentId, agent.pat.pat, 'sdk');
    await fundFromFaucet(chain, wallet.address, '1');

    // An official @x402/express seller, settling through the same local facilitator.
    expressUrl = await expressSeller(
      servers,
      chain.facilitatorUrl,
      [new ExactEvmServerScheme()],
      {
        'GET /weather': {
          accepts: {
            scheme: 'exact',
            network: 'eip155:84532',
            payTo: payToExpress,
            price: { asset: USDC, amount: '10000', extra: { name: 'USDC', version: '2' } },
          },
          description: 'weather',
          mimeType: 'application/json',
        },
      },
      { '/weather': (_req, res) => void res.json({ weather: 'rain' }) },
    );

    // Our Koa seller, reporting to Treasury's ledger.
    ({ seller, url: koaUrl } = await koaSeller(
      t,
      agent.session,
      servers,
      { seller: { name: 'Forecasts', slug: 'forecasts' }, endpoint: { path: '/forecast', price: '0.01' } },
      { price: '0.01', pay_to: payToKoa, facilitator_url: chain.facilitatorUrl },
      (ctx) => {
        ctx.type = 'application/json';
        ctx.body = KOA_BODY;
      },
    ));
    await provePayTo(t, agent.session, seller.seller_id, payToKoaKey);
  });
  after(async () => {
    await servers.closeAll();
    await t?.stop();
    await chain?.stop();
  });

  it('pays an official @x402/express seller; the balances move by exactly the price', async () => {
    const [buyerBefore, sellerBefore] = await readBalances(chain, wallet.address, payToExpress);
    const buyer = createX402Buyer({ client: agent.client, walletId: wallet.id, maxPriceUsd: '0.05' });
    const result = await buyer.request(`${expressUrl}/weather`);
    assert.equal(result.status, 200, result.body);
    assert.deepEqual(JSON.parse(result.body), { weather: 'rain' });
    assert.equal(result.paid, true);
    assert.match(result.receipt!.transaction, /^0x[0-9a-f]{64}$/);
    assert.equal(result.receipt!.success, true);
    assert.equal(result.receipt!.network, 'eip155:84532');
    assert.deepEqual([result.receipt!.amount_raw, result.receipt!.amount_usd], ['10000', '0.01']);
    assert.equal(result.receipt!.payer!.toLowerCase(), wallet.address.toLowerCase());
    assert.equal(result.requirements!.payTo, payToExpress);
    const payment = result.payment!;
    assert.ok(payment.scheme !== 'upto' && !isSolanaPayReply(payment), 'an exact EVM payment');
    assert.equal(payment.authorization.value, '10000');
    assert.equal(await readTokenBalance(chain, wallet.address), buyerBefore - 10_000n);
    assert.equal(await readTokenBalance(chain, payToExpress), sellerBefore + 10_000n);
    const balance = await agent.client.getBalance(wallet.id);
    assert.equal(balance.balance_raw, (buyerBefore - 10_000n).toString());
  });

  it('pays our Koa seller; the seller ledger has the row with tx_hash and content_hash', async () => {
    const buyer = createX402Buyer({ client: agent.client, walletId: wallet.id, maxPriceUsd: '0.01' });
    const response = await buyer.fetch(`${koaUrl}/forecast`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), KOA_BODY);
    const receipt = decodePaymentResponseHeader(response.headers.get('payment-response')!);
    // The row is reported at once; it names the Treasury authorization once the verifier saw that
    // authorization's own transfer on chain (docs/security-model.md, the merchant-of-record money flow).
    type Entry = {
      tx_hash: string;
      content_hash: string;
      payer: string;
      authorization_id: string | null;
      status: string;
    };
    let entries: Entry[] = [];
    for (let i = 0; i < 300 && (entries.length === 0 || entries[0]!.status === 'pending'); i++) {
      entries = (await t.request('GET', '/v1/ledger', { token: seller.pat })).body.entries;
      if (entries.length === 0 || entries[0]!.status === 'pending') await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.tx_hash, receipt.transaction.toLowerCase());
    assert.equal(entries[0]!.content_hash, createHash('sha256').update(KOA_BODY).digest('hex'));
    assert.ok(
      entries[0]!.authorization_id,
      `the row references the Treasury authorization: ${JSON.stringify(entries[0])}`,
    );
  });

  it('a price above maxPriceUsd is InsufficientBudgetError: nothing signed, nothing spent, nothing recorded', async () => {
    const knex = t.db.knex;
    const snapshot = async () => ({
      balance: await readTokenBalance(chain, wallet.address),
      authorizations: await knex('authorizations').where({ wallet_id: wallet.id }).count({ n: '*' }).first(),
      decisions: await knex('policy_decisions').where({ wallet_id: wallet.id }).count({ n: '*' }).first(),
      walletSpend: await knex('wallet_spend_totals')
        .where({ wallet_id: wallet.id })
        .orderBy(['window_kind', 'window_start'])
        .select('window_kind', 'spent_micro', 'payment_count'),
      patSpend: await knex('pat_spend_totals').where({ token_id: agent.pat.id }).select('day', 'spent_micro'),
    });
    const before = await snapshot();
    assert.equal(
      before.walletSpend.find((r: { window_kind: string }) => r.window_kind === 'day')?.spent_micro,
      '20000',
      'two payments of 0.01 so far',
    );
    const buyer = createX402Buyer({ client: agent.client, walletId: wallet.id, maxPriceUsd: '0.009999' });
    await assert.rejects(buyer.request(`${koaUrl}/forecast`), (err: unknown) => {
      assert.ok(err instanceof InsufficientBudgetError);
      assert.equal(err.requested_usd, '0.01');
      assert.equal(err.cap_usd, '0.009999');
      return true;
    });
    assert.deepEqual(await snapshot(), before);
  });

  it('a wallet short of the price: InsufficientFundsError with fund_wallet (shortfall, chain, deposit URI); nothing moved', async () => {
    // Its own agent PAT without a cap (the shared one's cap is counted by the test after this one) and a
    // wallet holding 0.004 USD against the Koa seller's 0.01.
    const pat = (
      await t.request('POST', '/v1/pats', { token: agent.session, body: { scope_type: 'agent', label: 'short' } })
    ).body.pat as string;
    const shortClient = new TreasuryClient({ apiUrl: t.baseUrl, token: pat });
    const agentId = (await t.request('GET', '/v1/auth/whoami', { token: pat })).body.scope_id as string;
    const poor = await newAgentWallet(t, agentId, pat, 'short');
    await fundFromFaucet(chain, poor.address, '0.004');
    const before = await readTokenBalance(chain, poor.address);
    const buyer = createX402Buyer({ client: shortClient, walletId: poor.id, maxPriceUsd: '0.01' });
    await assert.rejects(buyer.request(`${koaUrl}/forecast`), (err: unknown) => {
      assert.ok(err instanceof InsufficientFundsError, String(err));
      assert.equal(err.code, 'insufficient_funds');
      assert.deepEqual(err.recovery, {
        kind: 'fund_wallet',
        deposit_url: `https://sepolia.basescan.org/address/${poor.address}`,
        deposit_uri: `ethereum:${USDC}@84532/transfer?address=${poor.address}&uint256=6000`,
        shortfall_usd: '0.006',
        chain: 'eip155:84532',
      });
      assert.equal(err.paymentFailure.code, 'payment_failed');
      return true;
    });
    assert.equal(await readTokenBalance(chain, poor.address), before, 'nothing moved');
  });

  it('treasuryAccount: the official @x402/fetch client pays our Koa seller with a Treasury-held key', async () => {
    const account = await treasuryAccount({ client: agent.client, walletId: wallet.id });
    assert.equal(account.address.toLowerCase(), wallet.address.toLowerCase());
    await assert.rejects(account.signMessage({ message: 'hello' }), /only EIP-3009/);
    const official = new x402Client().register('eip155:84532', new ExactEvmClientScheme(account));
    const [sellerBefore, buyerBefore] = [
      await readTokenBalance(chain, payToKoa),
      await readTokenBalance(chain, wallet.address),
    ];
    const res = await wrapFetchWithPayment(fetch, official)(`${koaUrl}/forecast`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(await res.text(), KOA_BODY);
    assert.equal(await readTokenBalance(chain, payToKoa), sellerBefore + 10_000n);
    assert.equal(await readTokenBalance(chain, wallet.address), buyerBefore - 10_000n);
    // Signed through Treasury's pay endpoint: recorded there, and the seller's ledger row points at it.
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    let row: { tx_hash: string; authorization_id: string | null; status: string } | undefined;
    for (let i = 0; i < 300 && (!row || row.status === 'pending'); i++) {
      row = (
        (await t.request('GET', '/v1/ledger', { token: seller.pat })).body.entries as Array<{
          tx_hash: string;
          authorization_id: string | null;
          status: string;
        }>
      ).find((e) => e.tx_hash === receipt.transaction.toLowerCase());
      if (!row || row.status === 'pending') await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(row?.authorization_id, 'the ledger row references the Treasury authorization');
    const recorded = await t.db.knex('authorizations').where({ id: row.authorization_id }).first();
    assert.equal(recorded.wallet_id, wallet.id);
  });

  it("Treasury's answer to the buyer's pay lost on the way back: the retry carries the same Idempotency-Key, gets the recorded signature, and the seller is paid once", async () => {
    const knex = t.db.knex;
    const authorizations = async () =>
      Number((await knex('authorizations').where({ wallet_id: wallet.id }).count({ n: '*' }).first())!.n);
    const daySpent = async () =>
      BigInt(
        (
          await knex('wallet_spend_totals')
            .where({ wallet_id: wallet.id, window_kind: 'day' })
            .orderBy('window_start', 'desc')
            .first()
        )?.spent_micro ?? 0,
      );
    const before = {
      authorizations: await authorizations(),
      spent: await daySpent(),
      buyer: await readTokenBalance(chain, wallet.address),
      seller: await readTokenBalance(chain, payToKoa),
    };
    // The network between the buyer and Treasury: the first pay reaches Treasury and is served, its answer is lost.
    const keys: string[] = [];
    const lossy: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (String(input).endsWith('/pay')) {
        keys.push(new Headers(init?.headers).get('idempotency-key') ?? '');
        if (keys.length === 1) {
          await response.text();
          throw new TypeError('fetch failed: connection reset after the request was served');
        }
      }
      return response;
    };
    const buyer = createX402Buyer({
      client: new TreasuryClient({ apiUrl: t.baseUrl, token: agent.pat.pat, fetch: lossy }),
      walletId: wallet.id,
    });
    const result = await buyer.request(`${koaUrl}/forecast`);
    assert.equal(result.status, 200, result.body);
    assert.equal(keys.length, 2);
    assert.match(keys[0]!, /^pay_[0-9a-f]{32}$/, "the purchase's payment identifier is its Idempotency-Key");
    assert.equal(keys[1], keys[0], 'the retry is the same payment');
    assert.equal(await authorizations(), before.authorizations + 1, 'one authorization signed');
    assert.equal(await daySpent(), before.spent + 10_000n, 'spent once');
    assert.equal(await readTokenBalance(chain, wallet.address), before.buyer - 10_000n);
    assert.equal(await readTokenBalance(chain, payToKoa), before.seller + 10_000n);
  });

  it("the PAT's daily cap (0.04, four payments made) is PatCapReachedError with the settings link; no bearer is treasury_key_missing", async () => {
    const buyer = createX402Buyer({ client: agent.client, walletId: wallet.id });
    let result: X402Result | undefined;
    await assert.rejects(
      (async () => {
        result = await buyer.request(`${koaUrl}/forecast`);
      })(),
      (err: unknown) => {
        assert.ok(err instanceof PatCapReachedError, String(err));
        assert.equal(err.code, 'MGMT_6014');
        assert.match(err.user_message, /cap/i);
        assert.match(err.settings_url ?? '', new RegExp(agent.pat.id));
        assert.equal(err.currentCapUsd, '0.04');
        return true;
      },
    );
    assert.equal(result, undefined);
    assert.throws(() => new TreasuryClient({ apiUrl: t.baseUrl, token: undefined }), TreasuryKeyMissingError);
    assert.throws(
      () => new TreasuryClient({ apiUrl: t.baseUrl, token: '' }),
      (err: unknown) => err instanceof TreasuryKeyMissingError && err.code === 'treasury_key_missing',
    );
  });
});
