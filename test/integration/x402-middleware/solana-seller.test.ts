/**
 * The Koa seller middleware selling on Solana, against the offline chain (ops/solana/): the official
 * `@x402/svm` client (a kit key pair funded by the faucet) pays our Koa seller through the local x402 SVM
 * facilitator. The 402 names the facilitator's fee payer (its GET /supported); a payment moves exactly the price
 * and is reported to the platform with its base58 signature; the same payment again settles nothing; a 402
 * offering Base and Solana lets the official client pay on either, each with its own facilitator; a transaction
 * that pays another account is refused before the facilitator is asked.
 */
import assert from 'node:assert/strict';
import { createSolanaRpc, generateKeyPairSigner, type Address, type KeyPairSigner } from '@solana/kit';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { wrapFetchWithPayment } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClientScheme } from '@x402/svm/exact/client';
import { pino } from 'pino';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { associatedTokenAddress } from '../../../ops/solana/spl-token-layouts.js';
import { encodeBase64Json } from '../../../src/x402/base64-json.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { officialClient } from '../../unit/x402/x402-fixtures.js';
import { PAID_BODY, startFakes, startSellerApp, type FakeServer, type SellerApp } from './x402-fakes.js';

const PRICE_UNITS = 10_000n; // "0.01" USD in USDC base units

describe('x402 Koa middleware on Solana (official @x402/svm client, local chain and facilitator)', function () {
  this.timeout(90_000);
  let solana: LocalSolana;
  let rpc: ReturnType<typeof createSolanaRpc>;
  let buyer: KeyPairSigner;
  let payTo: Address;
  let evmFacilitator: FakeServer;
  let platform: FakeServer;
  let both: SellerApp;
  let solanaOnly: SellerApp;

  const usdcOf = async (owner: Address): Promise<bigint> => {
    const account = await associatedTokenAddress(owner, solana.mint);
    return BigInt((await rpc.getTokenAccountBalance(account).send()).value.amount);
  };
  const svmClient = () =>
    new x402Client().register(solana.network, new ExactSvmClientScheme(buyer, { rpcUrl: solana.rpcUrl }));
  const challengeOf = async (url: string) => (await (await fetch(url)).json()) as PaymentRequired;

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    rpc = createSolanaRpc(solana.rpcUrl);
    buyer = await generateKeyPairSigner();
    payTo = (await generateKeyPairSigner()).address;
    await solana.faucet.fundUsdc(buyer.address, 1_000_000n);
    await solana.faucet.fundUsdc(payTo, 0n);
    ({ facilitator: evmFacilitator, platform } = await startFakes());
    const offer = { pay_to: payTo, facilitator_url: solana.facilitatorUrl };
    both = await startSellerApp({
      api_url: platform.url,
      facilitator_url: evmFacilitator.url,
      solana: offer,
      timeouts: { verify_ms: 10_000, settle_ms: 10_000, platform_ms: 2_000 },
    });
    solanaOnly = await startSellerApp({
      api_url: platform.url,
      pay_to: undefined,
      solana: offer,
      timeouts: { verify_ms: 10_000, settle_ms: 10_000, platform_ms: 2_000 },
    });
  });

  after(async () => {
    await Promise.all([both?.middleware.flush(), solanaOnly?.middleware.flush()]);
    await Promise.all([both?.stop(), solanaOnly?.stop(), evmFacilitator?.stop(), platform?.stop()]);
    await solana?.stop();
  });

  it('the 402 lists Base and Solana; the Solana entry carries the facilitator fee payer and the devnet USDC', async () => {
    const c = await challengeOf(`${both.url}/paid`);
    assert.deepEqual(
      c.accepts.map((a) => a.network),
      ['eip155:84532', solana.network],
    );
    const svm = c.accepts[1]!;
    assert.equal(svm.scheme, 'exact');
    assert.equal(svm.payTo, payTo);
    assert.equal(svm.asset, solana.mint);
    assert.equal(svm.amount, PRICE_UNITS.toString());
    assert.deepEqual(svm.extra, { feePayer: solana.feePayer });
    const only = await challengeOf(`${solanaOnly.url}/paid`);
    assert.deepEqual(
      only.accepts.map((a) => a.network),
      [solana.network],
    );
  });

  it('the official client pays on Solana: balances move by the price, the platform hears the signature; a replay settles nothing', async () => {
    const sent: { header?: string } = {};
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      sent.header = request.headers.get('payment-signature') ?? sent.header;
      return fetch(request);
    };
    const [buyerBefore, payToBefore] = [await usdcOf(buyer.address), await usdcOf(payTo)];
    // The fake platform has no batch route: the reporter falls back to one row per call on /v1/ledger.
    const reportsBefore = platform.callsTo('/v1/ledger').length;
    const res = await wrapFetchWithPayment(recording, svmClient())(`${solanaOnly.url}/paid`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok((await res.text()).includes(PAID_BODY));
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(receipt.network, solana.network);
    assert.equal(receipt.payer, buyer.address);
    assert.equal(await usdcOf(buyer.address), buyerBefore - PRICE_UNITS);
    assert.equal(await usdcOf(payTo), payToBefore + PRICE_UNITS);

    await solanaOnly.middleware.flush();
    const rows = platform
      .callsTo('/v1/ledger')
      .slice(reportsBefore)
      .map((c) => c.body);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].tx_hash, receipt.transaction);
    assert.equal(rows[0].payer, buyer.address);
    assert.equal(rows[0].network, solana.network);
    assert.equal(rows[0].amount, PRICE_UNITS.toString());
    assert.equal(rows[0].nonce, undefined);

    const runs = solanaOnly.handlerRuns;
    const again = await fetch(`${solanaOnly.url}/paid`, { headers: { 'payment-signature': sent.header! } });
    assert.equal(again.status, 402);
    assert.equal(solanaOnly.handlerRuns, runs, 'the paid work does not run again');
    // Another seller process (its own replay guard) with the same terms: the facilitator refuses to settle it
    // again (duplicate_settlement), so its body is withheld and nothing moves.
    const elsewhere = await fetch(`${both.url}/paid`, { headers: { 'payment-signature': sent.header! } });
    assert.equal(elsewhere.status, 402);
    const refused = await elsewhere.text();
    assert.ok(!refused.includes(PAID_BODY));
    assert.ok(refused.includes('settlement_failed'), refused);
    assert.equal(await usdcOf(buyer.address), buyerBefore - PRICE_UNITS);
    assert.equal(await usdcOf(payTo), payToBefore + PRICE_UNITS);
  });

  it('a 402 offering both lets the official client pay on either network, each with its own facilitator', async () => {
    const evmSettles = evmFacilitator.callsTo('/settle').length;
    const payToBefore = await usdcOf(payTo);
    const viaBase = await wrapFetchWithPayment(fetch, officialClient())(`${both.url}/paid`);
    assert.equal(viaBase.status, 200);
    assert.equal(decodePaymentResponseHeader(viaBase.headers.get('payment-response')!).network, 'eip155:84532');
    assert.equal(evmFacilitator.callsTo('/settle').length, evmSettles + 1);
    assert.equal(await usdcOf(payTo), payToBefore, 'nothing moved on Solana');

    const viaSolana = await wrapFetchWithPayment(fetch, svmClient())(`${both.url}/paid`);
    assert.equal(viaSolana.status, 200, await viaSolana.clone().text());
    assert.equal(decodePaymentResponseHeader(viaSolana.headers.get('payment-response')!).network, solana.network);
    assert.equal(evmFacilitator.callsTo('/settle').length, evmSettles + 1, 'the EVM facilitator was not asked');
    assert.equal(await usdcOf(payTo), payToBefore + PRICE_UNITS);
  });

  it('a Solana transaction paying another account or amount is refused before the facilitator sees it', async () => {
    const c = await challengeOf(`${both.url}/paid`);
    const ours = c.accepts.find((a) => a.network === solana.network)!;
    const http = new x402HTTPClient(svmClient());
    const other = (await generateKeyPairSigner()).address;
    await solana.faucet.fundUsdc(other, 0n);
    const [buyerBefore, payToBefore] = [await usdcOf(buyer.address), await usdcOf(payTo)];
    for (const [change, reason] of [
      [{ payTo: other }, 'authorization_recipient_mismatch'],
      [{ amount: '1' }, 'authorization_value_mismatch'],
    ] as const) {
      const forged = await http.createPaymentPayload({ ...c, accepts: [{ ...ours, ...change }] } as never);
      const header = encodeBase64Json({ ...forged, accepted: ours });
      const runs = both.handlerRuns;
      const res = await fetch(`${both.url}/paid`, { headers: { 'payment-signature': header } });
      assert.equal(res.status, 402);
      assert.ok(((await res.json()) as { error: string }).error.includes(reason));
      assert.equal(both.handlerRuns, runs);
    }
    assert.equal(await usdcOf(buyer.address), buyerBefore);
    assert.equal(await usdcOf(payTo), payToBefore);
  });
});
