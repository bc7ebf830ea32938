/**
 * x402 `upto` end to end with nothing faked: anvil with the test USDC, Permit2 and the upto proxy at their
 * canonical addresses, the local facilitator built on the official packages (UptoEvmScheme), Treasury
 * (PostgreSQL + SoftHSM) holding the buyer's key.
 * - A wallet without the Permit2 allowance: Treasury answers 412 permit2_allowance_required and records
 *   nothing; the SDK buyer raises Permit2AllowanceRequiredError, or pays the seller's next (exact) entry.
 * - With the allowance, a Treasury wallet pays an official @x402/express upto seller that charges 40% of the
 *   maximum: balances move by exactly that; Treasury counted the signed maximum, and once the SDK reported
 *   the settlement's transaction, verified on chain, only the 40% (day, PAT day, audit chain).
 * - A reported settlement is held to the chain: the same transaction again answers the stored result; a
 *   transaction of another authorization, one that is not an upto settlement, one never mined, a second one
 *   for a settled authorization, one reported for an `exact` authorization and hostile input are refused and
 *   change nothing.
 * - The official @x402/fetch upto client (a plain viem key) pays our Koa seller, whose handler charges 25%:
 *   balances move by exactly that, the receipt (official decoder) carries the amount, the ledger row too.
 * - treasuryAccount used by the official upto client pays our Koa seller, whose ledger row is linked to the
 *   Treasury authorization once verified (the transaction is its Permit2 settlement); a zero charge moves nothing.
 * - A seller reporting another transaction of the same buyer (an exact payment to the same payee) with an
 *   unsettled upto authorization's nonce: verified, linked to nothing.
 * - A payment whose witness names another facilitator is refused (upto_facilitator_mismatch) and nothing moves.
 */
import assert from 'node:assert/strict';
import { numberToHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { UptoEvmScheme as UptoEvmClientScheme } from '@x402/evm/upto/client';
import { UptoEvmScheme as UptoEvmServerScheme } from '@x402/evm/upto/server';
import { setSettlementOverrides as setExpressOverrides } from '@x402/express';
import { wrapFetchWithPayment } from '@x402/fetch';
import { setSettlementOverrides } from 'treasury/koa';
import { createX402Buyer, Permit2AllowanceRequiredError, treasuryAccount, TreasuryClient } from 'treasury/sdk';
import { LoopbackServers } from '../support/loopback-servers.js';
import { startTestTreasury, type TestTreasury } from '../support/api-harness.js';
import { fundFromFaucet, readTokenBalance, startTestChain } from '../support/chain-harness.js';
import { signInWithNewKey } from '../support/sign-in.js';
import { verifyAuditChain } from '../../src/api/audit/audit-ledger.js';
import { mineBlocks, provePayTo, waitForLedgerRow } from '../support/seller-pay-to.js';
import { createFacilitatorClient } from '../../src/x402/facilitator-client.js';
import { agentBuyer, expressSeller, koaSeller, newAgentWallet, readBalances } from '../support/x402-e2e-fixture.js';

const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const MAX = 100_000n; // $0.10, the signed maximum of every upto route here

describe('x402 upto end to end: Permit2 witness, official facilitator, Treasury, Koa and express sellers', function () {
  this.timeout(240_000);
  let chain: Awaited<ReturnType<typeof startTestChain>>;
  let t: TestTreasury;
  let client: TreasuryClient;
  let agentId: string;
  let agentPat: string;
  let agentPatId: string;
  const servers = new LoopbackServers();
  const payToExpress = privateKeyToAccount(generatePrivateKey()).address;
  const payToKoaAccount = privateKeyToAccount(generatePrivateKey());
  const payToKoa = payToKoaAccount.address;
  let expressUrl: string;
  let koaUrl: string;
  let seller: { seller_id: string; pat: string };
  /** What the Koa handler charges next, as a Settlement-Overrides amount. */
  let koaCharge = '25%';

  const approvePermit2 = async (address: string) => {
    const res = await fetch(chain.faucetUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address, amount_usd: '1', approve_permit2: true }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(
      ((await res.json()) as { permit2_approval_tx?: string }).permit2_approval_tx ?? '',
      /^0x[0-9a-f]{64}$/,
    );
  };

  /**
   * The official @x402/fetch upto client for `account`, its Permit2 approved (and funded) by the faucet,
   * and the buyer's and the Koa seller's balances before it pays.
   */
  const officialUptoBuyer = async (account: ConstructorParameters<typeof UptoEvmClientScheme>[0]) => {
    await approvePermit2(account.address);
    const official = new x402Client().register('eip155:84532', new UptoEvmClientScheme(account));
    const before = {
      buyer: await readTokenBalance(chain, account.address),
      seller: await readTokenBalance(chain, payToKoa),
    };
    return { pay: wrapFetchWithPayment(fetch, official), before };
  };
  const newWallet = (label: string) => newAgentWallet(t, agentId, agentPat, label);
  const ledgerRow = async (tx: string) => {
    for (let i = 0; i < 100; i++) {
      const row = (
        (await t.request('GET', '/v1/ledger', { token: seller.pat })).body.entries as Array<{
          tx_hash: string;
          amount: string;
          authorization_id: string | null;
        }>
      ).find((e) => e.tx_hash === tx.toLowerCase());
      if (row) return row;
      await new Promise((r) => setTimeout(r, 100));
    }
    return undefined;
  };

  before(async () => {
    chain = await startTestChain();
    t = await startTestTreasury({
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': chain.rpcUrl }),
        TREASURY_LEDGER_VERIFY_INTERVAL_MS: '100',
      },
    });
    const agent = await agentBuyer(t, { label: 'upto buyer' });
    ({ agentId, client } = agent);
    ({ pat: agentPat, id: agentPatId } = agent.pat);

    // An official @x402/express seller: /metered is upto only (charges 40%), /either offers upto then exact.
    const price = { asset: USDC, amount: MAX.toString(), extra: { name: 'USDC', version: '2' } };
    expressUrl = await expressSeller(
      servers,
      chain.facilitatorUrl,
      [new UptoEvmServerScheme(), new ExactEvmServerScheme()],
      {
        'GET /metered': {
          accepts: { scheme: 'upto', network: 'eip155:84532', payTo: payToExpress, price },
          description: 'metered',
          mimeType: 'application/json',
        },
        'GET /either': {
          accepts: [
            { scheme: 'upto', network: 'eip155:84532', payTo: payToExpress, price },
            { scheme: 'exact', network: 'eip155:84532', payTo: payToExpress, price: { ...price, amount: '30000' } },
          ],
          description: 'either',
          mimeType: 'application/json',
        },
      },
      {
        '/metered': (_req, res) => {
          setExpressOverrides(res, { amount: '40%' });
          res.json({ tokens: 400 });
        },
        '/either': (_req, res) => void res.json({ either: true }),
      },
    );

    // Our Koa seller: upto at $0.10, the handler names the charge.
    ({ seller, url: koaUrl } = await koaSeller(
      t,
      agent.session,
      servers,
      { seller: { name: 'Metered', slug: 'metered' }, endpoint: { path: '/tokens', price: '0.10' } },
      {
        price: '0.10',
        pay_to: payToKoa,
        schemes: ['upto'],
        facilitator_url: chain.facilitatorUrl,
        facilitator_address: chain.facilitatorAddress,
      },
      (ctx) => {
        setSettlementOverrides(ctx, { amount: koaCharge });
        ctx.body = { tokens: 250 };
      },
    ));
    // Its revenue is verified on chain (and its rows linked to Treasury authorizations) only to a proven pay-to.
    await provePayTo(t, agent.session, seller.seller_id, payToKoaAccount);
  });
  after(async () => {
    await servers.closeAll();
    await t?.stop();
    await chain?.stop();
  });

  it('without the Permit2 allowance: 412 permit2_allowance_required, nothing recorded; the buyer falls through to exact', async () => {
    const w = await newWallet('no-allowance');
    await fundFromFaucet(chain, w.address, '1');
    const requirements = {
      scheme: 'upto',
      network: 'eip155:84532',
      payTo: payToExpress,
      amount: MAX.toString(),
      asset: USDC,
      maxTimeoutSeconds: 300,
      extra: { facilitatorAddress: chain.facilitatorAddress, assetTransferMethod: 'permit2' },
    };
    const res = await t.request('POST', `/v1/wallets/${w.id}/pay`, {
      token: agentPat,
      body: { payment_requirements: requirements },
    });
    assert.equal(res.status, 412, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'permit2_allowance_required');
    assert.deepEqual([res.body.allowance_raw, res.body.required_raw], ['0', MAX.toString()]);
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id })).length, 0);
    assert.equal((await t.db.knex('policy_decisions').where({ wallet_id: w.id })).length, 0);

    const buyer = createX402Buyer({ client, walletId: w.id, maxPriceUsd: '0.10' });
    await assert.rejects(
      buyer.request(`${expressUrl}/metered`),
      (err: unknown) => err instanceof Permit2AllowanceRequiredError && err.requiredRaw === MAX.toString(),
    );
    const before = await readTokenBalance(chain, w.address);
    const result = await buyer.request(`${expressUrl}/either`);
    assert.equal(result.status, 200, result.body);
    assert.equal(result.requirements!.scheme, 'exact');
    assert.equal(await readTokenBalance(chain, w.address), before - 30_000n);
  });

  it('a Treasury wallet pays an official express upto seller; the seller charges 40% and exactly that moves', async () => {
    const w = await newWallet('express-upto');
    await approvePermit2(w.address);
    const [buyerBefore, sellerBefore] = await readBalances(chain, w.address, payToExpress);
    const buyer = createX402Buyer({ client, walletId: w.id, maxPriceUsd: '0.10' });
    const result = await buyer.request(`${expressUrl}/metered`);
    assert.equal(result.status, 200, result.body);
    assert.deepEqual(JSON.parse(result.body), { tokens: 400 });
    assert.equal(result.requirements!.scheme, 'upto');
    assert.equal(result.receipt!.amount_raw, '40000');
    assert.match(result.receipt!.transaction, /^0x[0-9a-f]{64}$/);
    assert.equal(await readTokenBalance(chain, w.address), buyerBefore - 40_000n);
    assert.equal(await readTokenBalance(chain, payToExpress), sellerBefore + 40_000n);
    // Treasury recorded an upto authorization for the signed maximum, bound to the facilitator.
    const [row] = await t.db.knex('authorizations').where({ wallet_id: w.id });
    assert.equal(row.scheme, 'upto');
    assert.equal(row.value_raw, MAX.toString());
    assert.equal(row.status, 'signed');
    assert.equal(result.payment!.scheme, 'upto');
    assert.equal(
      result.payment!.scheme === 'upto' && result.payment!.permit2_authorization.witness.facilitator.toLowerCase(),
      chain.facilitatorAddress.toLowerCase(),
    );
    // The SDK reported the settlement's transaction: verified on chain, the unsettled 60% given back.
    assert.deepEqual(
      result.settlement && {
        tx: result.settlement.transaction,
        max: result.settlement.signed_max_usd,
        settled: result.settlement.settled_usd,
        back: result.settlement.given_back_usd,
        replayed: result.settlement.replayed,
      },
      { tx: result.receipt!.transaction.toLowerCase(), max: '0.1', settled: '0.04', back: '0.06', replayed: false },
      result.settlementError,
    );
    const [settled] = await t.db.knex('authorizations').where({ wallet_id: w.id });
    assert.deepEqual(
      [settled.settled_raw, settled.settlement_tx],
      ['40000', result.receipt!.transaction.toLowerCase()],
    );
    const [day] = await t.db.knex('wallet_spend_totals').where({ wallet_id: w.id, window_kind: 'day' });
    assert.equal(day.spent_micro, '40000', 'the day counts what was charged');
    const events = await t.db.knex('audit_events').where({ chain_key: w.id }).orderBy('seq');
    assert.deepEqual(events.map((e) => e.event_type).slice(-2), ['payment.reserved', 'payment.settled']);
    assert.equal((await verifyAuditChain(t.db.knex, w.id)).ok, true);
  });

  it('spend is given back only once the settlement is as deep as the network requires: 409 settlement_unconfirmed before, with the confirmations so far', async () => {
    // A second API process on the same database that requires 3 confirmations on this chain.
    const deep = await startTestTreasury({
      database: t.db,
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': chain.rpcUrl }),
        TREASURY_LEDGER_CONFIRMATIONS: JSON.stringify({ 'eip155:84532': 3 }),
        TREASURY_LEDGER_VERIFY_INTERVAL_MS: '0',
      },
    });
    try {
      const w = await newWallet('deep-settlement');
      await approvePermit2(w.address);
      const quiet = createX402Buyer({ client, walletId: w.id, maxPriceUsd: '0.10', recordSettlements: false });
      const paid = await quiet.request(`${expressUrl}/metered`);
      assert.equal(paid.status, 200, paid.body);
      const tx = paid.receipt!.transaction as `0x${string}`;
      const spent = async () =>
        String(
          (await t.db.knex('wallet_spend_totals').where({ wallet_id: w.id, window_kind: 'day' }).first()).spent_micro,
        );
      const report = () =>
        deep.request('POST', `/v1/wallets/${w.id}/authorizations/${paid.payment!.authorization_id}/settlement`, {
          token: agentPat,
          body: { transaction: tx },
        });
      const depth = async () =>
        Number(
          (await chain.publicClient.getBlockNumber({ cacheTime: 0 })) -
            (await chain.publicClient.getTransactionReceipt({ hash: tx })).blockNumber,
        ) + 1;
      const now = await depth();
      assert.ok(now < 3, `the settlement is ${now} blocks deep already`);
      for (let blocks = now; blocks < 3; blocks++) {
        const shallow = await report();
        assert.equal(shallow.status, 409, JSON.stringify(shallow.body));
        assert.deepEqual(
          [shallow.body.error_code, shallow.body.confirmations, shallow.body.required_confirmations],
          ['settlement_unconfirmed', blocks, 3],
        );
        assert.equal(await spent(), MAX.toString(), 'nothing given back yet');
        await mineBlocks(chain.rpcUrl, 1);
      }
      const deepEnough = await report();
      assert.equal(deepEnough.status, 200, JSON.stringify(deepEnough.body));
      assert.deepEqual([deepEnough.body.settled_usd, deepEnough.body.given_back_usd], ['0.04', '0.06']);
      assert.equal(await spent(), '40000');
    } finally {
      await deep.stop();
    }
  });

  it('a reported settlement is held to the chain: replays answer the stored result; other transactions, exact payments and hostile input change nothing', async () => {
    const w = await newWallet('settlement-checks');
    const approval = await fetch(chain.faucetUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address: w.address, amount_usd: '1', approve_permit2: true }),
    });
    const approvalTx = ((await approval.json()) as { permit2_approval_tx: string }).permit2_approval_tx;
    const patDay = async () =>
      String(
        (await t.db.knex('pat_spend_totals').where({ token_id: agentPatId }).orderBy('day', 'desc').first())
          .spent_micro,
      );
    const spent = async () =>
      String(
        (await t.db.knex('wallet_spend_totals').where({ wallet_id: w.id, window_kind: 'day' }).first()).spent_micro,
      );
    const report = (authorizationId: string, transaction: string, token = agentPat) =>
      t.request('POST', `/v1/wallets/${w.id}/authorizations/${authorizationId}/settlement`, {
        token,
        body: { transaction },
      });

    // Two upto payments whose settlements the SDK does not report, and one exact payment.
    const quiet = createX402Buyer({ client, walletId: w.id, maxPriceUsd: '0.10', recordSettlements: false });
    const a = await quiet.request(`${expressUrl}/metered`);
    const b = await quiet.request(`${expressUrl}/metered`);
    for (const r of [a, b])
      assert.deepEqual(
        [r.status, r.payment!.scheme, r.settlement, r.settlementError],
        [200, 'upto', undefined, undefined],
      );
    const exact = await t.request('POST', `/v1/wallets/${w.id}/pay`, {
      token: agentPat,
      body: {
        payment_requirements: {
          scheme: 'exact',
          network: 'eip155:84532',
          payTo: payToExpress,
          amount: '1000',
          asset: USDC,
          maxTimeoutSeconds: 300,
          extra: { name: 'USDC', version: '2' },
        },
      },
    });
    assert.equal(exact.status, 200, JSON.stringify(exact.body));
    const [txA, txB] = [a.receipt!.transaction, b.receipt!.transaction];
    const [idA, idB] = [a.payment!.authorization_id, b.payment!.authorization_id];
    assert.equal(await spent(), String(2n * MAX + 1000n), 'both counted at their maximum');
    const patBefore = await patDay();
    const auditRows = async () => (await t.db.knex('audit_events').where({ chain_key: w.id })).length;
    const rowsBefore = await auditRows();

    const refusals: Array<[string, Awaited<ReturnType<typeof report>>, number, string, string?]> = [
      [
        "another authorization's settlement",
        await report(idB, txA),
        422,
        'settlement_not_verified',
        'authorization_mismatch',
      ],
      [
        'not an upto settlement',
        await report(idA, approvalTx),
        422,
        'settlement_not_verified',
        'not_an_upto_settlement',
      ],
      [
        'never mined',
        await report(idA, `0x${'ab'.repeat(32)}`),
        422,
        'settlement_not_verified',
        'transaction_not_found',
      ],
      [
        "an exact authorization, with an upto settlement's transaction",
        await report(exact.body.authorization_id, txA),
        422,
        'settlement_not_verified',
        'authorization_mismatch',
      ],
      ['no such authorization', await report(`auth_${'0'.repeat(24)}`, txA), 404, 'authorization_not_found'],
      ['a malformed hash', await report(idA, '0x1234'), 400, 'invalid_request'],
      [
        'an extra field',
        await t.request('POST', `/v1/wallets/${w.id}/authorizations/${idA}/settlement`, {
          token: agentPat,
          body: { transaction: txA, settled_raw: '0' },
        }),
        400,
        'invalid_request',
      ],
      ['a malformed authorization id', await report('auth_../../x', txA), 400, 'invalid_path_parameter'],
    ];
    for (const [what, res, status, code, reason] of refusals) {
      assert.equal(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error_code, code, what);
      if (reason) assert.equal(res.body.reason, reason, what);
    }
    assert.deepEqual(
      [await spent(), await patDay(), await auditRows()],
      [String(2n * MAX + 1000n), patBefore, rowsBefore],
      'nothing changed',
    );

    // Another account's bearer cannot report for this wallet.
    const stranger = await signInWithNewKey(t);
    const strangerPat = (
      await t.request('POST', '/v1/pats', { token: stranger.session, body: { scope_type: 'agent' } })
    ).body.pat;
    assert.equal((await report(idA, txA, strangerPat)).status, 404);

    const first = await report(idA, txA);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual([first.body.settled_usd, first.body.given_back_usd, first.body.replayed], ['0.04', '0.06', false]);
    const again = await report(idA, txA.toUpperCase().replace('0X', '0x'));
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(
      [again.body.settled_usd, again.body.given_back_usd, again.body.replayed, again.body.settled_at],
      ['0.04', '0.06', true, first.body.settled_at],
    );
    const second = await report(idA, txB);
    assert.equal(second.status, 409, JSON.stringify(second.body));
    assert.equal(second.body.error_code, 'settlement_already_recorded');
    assert.equal((await report(idB, txB)).status, 200);
    assert.equal(await spent(), String(2n * 40_000n + 1000n), 'each upto payment counts what it was charged');
    assert.equal(await patDay(), String(BigInt(patBefore) - 2n * 60_000n), "the paying PAT's day too");
    const settledEvents = await t.db.knex('audit_events').where({ chain_key: w.id, event_type: 'payment.settled' });
    assert.equal(settledEvents.length, 2, 'one audit row per recorded settlement, none for the replay');
    assert.equal((await verifyAuditChain(t.db.knex, w.id)).ok, true);
  });

  it('the official @x402/fetch upto client pays our Koa seller; 25% moves; receipt and ledger carry the amount', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const { pay, before } = await officialUptoBuyer(account);
    koaCharge = '25%';
    const res = await pay(`${koaUrl}/tokens`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { tokens: 250 });
    assert.equal(res.headers.get('settlement-overrides'), null, 'the override header never reaches the buyer');
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(receipt.success, true);
    assert.equal((receipt as { amount?: string }).amount, '25000');
    assert.equal(await readTokenBalance(chain, account.address), before.buyer - 25_000n);
    assert.equal(await readTokenBalance(chain, payToKoa), before.seller + 25_000n);
    const row = await ledgerRow(receipt.transaction);
    assert.ok(row, 'ledger row reported');
    assert.equal(row.amount, '25000');
  });

  it('a handler charging above the signed maximum: 500 settlement_override_invalid, nothing settled, nothing moves', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const { pay, before } = await officialUptoBuyer(account);
    koaCharge = '$5'; // the route's price (and so the signed maximum) is $0.10
    try {
      const res = await pay(`${koaUrl}/tokens`);
      assert.equal(res.status, 500, await res.clone().text());
      const body = (await res.json()) as { error_code?: string; reason?: string; tokens?: unknown };
      assert.equal(body.error_code, 'settlement_override_invalid');
      assert.match(body.reason ?? '', /above the signed maximum/);
      assert.equal(body.tokens, undefined, "the handler's body is withheld");
      assert.equal(res.headers.get('payment-response'), null, 'no receipt: nothing was settled');
    } finally {
      koaCharge = '25%';
    }
    assert.equal(await readTokenBalance(chain, account.address), before.buyer);
    assert.equal(await readTokenBalance(chain, payToKoa), before.seller);
  });

  it('treasuryAccount with the official upto client pays our Koa seller; a zero charge moves nothing', async () => {
    const w = await newWallet('account-upto');
    const account = await treasuryAccount({ client, walletId: w.id });
    assert.equal(account.address.toLowerCase(), w.address.toLowerCase());
    const { pay: paying, before } = await officialUptoBuyer(account);
    koaCharge = '$0.03';
    const res = await paying(`${koaUrl}/tokens`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(await readTokenBalance(chain, w.address), before.buyer - 30_000n);
    assert.equal(await readTokenBalance(chain, payToKoa), before.seller + 30_000n);
    const [row] = await t.db.knex('authorizations').where({ wallet_id: w.id });
    assert.equal(row.scheme, 'upto');
    const receiptPaid = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    // Linked once verified: the transaction is this authorization's own Permit2 settlement.
    const linked = await waitForLedgerRow(t, seller.pat, receiptPaid.transaction, (r) => r.status === 'verified');
    assert.equal(
      (linked as unknown as { authorization_id: string | null }).authorization_id,
      row.id,
      'the ledger row points at the Treasury authorization',
    );

    koaCharge = '0';
    const free = await paying(`${koaUrl}/tokens`);
    assert.equal(free.status, 200, await free.clone().text());
    const receipt = decodePaymentResponseHeader(free.headers.get('payment-response')!);
    assert.deepEqual([receipt.success, receipt.transaction, (receipt as { amount?: string }).amount], [true, '', '0']);
    assert.equal(await readTokenBalance(chain, w.address), before.buyer - 30_000n);
  });

  it("a seller naming an upto authorization's nonce on another transaction of the same buyer links nothing", async () => {
    const w = await newWallet('upto-nonce-claim');
    await approvePermit2(w.address);
    const pay = async (requirements: unknown) => {
      const res = await t.request('POST', `/v1/wallets/${w.id}/pay`, {
        token: agentPat,
        body: { payment_requirements: requirements },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    };
    // An upto authorization for the Koa route (a $0.10 maximum to payToKoa): signed, never settled.
    const challenge = (await (await fetch(`${koaUrl}/tokens`)).json()) as { accepts: unknown[] };
    const unsettled = await pay(challenge.accepts[0]);
    assert.equal(unsettled.scheme, 'upto');
    // A real payment of the same buyer to the same payee: an exact one, settled by the facilitator.
    const accepted = {
      scheme: 'exact',
      network: 'eip155:84532',
      payTo: payToKoa,
      amount: '30000',
      asset: USDC,
      maxTimeoutSeconds: 300,
      extra: { name: 'USDC', version: '2' },
    };
    const exact = await pay(accepted);
    const outcome = await createFacilitatorClient({ url: chain.facilitatorUrl }).settle({
      x402Version: 2,
      paymentPayload: {
        x402Version: 2,
        resource: { url: `${koaUrl}/tokens` },
        accepted,
        payload: { signature: exact.signature, authorization: exact.authorization },
      },
      paymentRequirements: accepted,
    });
    assert.equal(outcome.kind, 'ok', JSON.stringify(outcome));
    const transaction = (outcome as { settlement: { transaction: string } }).settlement.transaction;

    // The seller reports that transaction as the settlement of the unsettled upto authorization.
    const reported = await t.request('POST', '/v1/ledger', {
      token: seller.pat,
      body: {
        network: 'eip155:84532',
        tx_hash: transaction,
        payer: w.address,
        amount: '30000',
        nonce: numberToHex(BigInt(unsettled.permit2_authorization.nonce), { size: 32 }),
      },
    });
    assert.equal(reported.status, 201, JSON.stringify(reported.body));
    const row = await waitForLedgerRow(t, seller.pat, transaction, (r) => r.status === 'verified');
    assert.equal(
      (row as unknown as { authorization_id: string | null }).authorization_id,
      null,
      "the transaction is not that authorization's Permit2 settlement",
    );
    const history = (await t.request('GET', `/v1/wallets/${w.id}/payments`, { token: agentPat })).body
      .payments as Array<{ id: string; status: string; tx_hash: string | null }>;
    const upto = history.find((p) => p.id === unsettled.authorization_id);
    assert.deepEqual([upto?.status, upto?.tx_hash], ['signed', null], 'the upto authorization is not shown as settled');
  });

  it('a witness bound to another facilitator is refused before the handler; nothing moves', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    await approvePermit2(account.address);
    const first = await fetch(`${koaUrl}/tokens`);
    assert.equal(first.status, 402);
    const challenge = (await first.json()) as { resource: unknown; accepts: Array<Record<string, any>> };
    const forged = structuredClone(challenge.accepts[0]!);
    forged.extra.facilitatorAddress = privateKeyToAccount(generatePrivateKey()).address;
    const payload = await new x402Client()
      .register('eip155:84532', new UptoEvmClientScheme(account))
      .createPaymentPayload({ x402Version: 2, resource: challenge.resource as never, accepts: [forged as never] });
    const before = await readTokenBalance(chain, account.address);
    const res = await fetch(`${koaUrl}/tokens`, {
      headers: {
        'PAYMENT-SIGNATURE': encodePaymentSignatureHeader({ ...payload, accepted: challenge.accepts[0] } as never),
      },
    });
    assert.equal(res.status, 402);
    assert.match(((await res.json()) as { error: string }).error, /upto_facilitator_mismatch|extra_mismatch/);
    assert.equal(await readTokenBalance(chain, account.address), before);
    // The official facilitator says the same of that payload.
    const verify = await fetch(`${chain.facilitatorUrl}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: { ...payload, accepted: forged },
        paymentRequirements: forged,
      }),
    });
    assert.equal(((await verify.json()) as { invalidReason?: string }).invalidReason, 'upto_facilitator_mismatch');
  });
});
