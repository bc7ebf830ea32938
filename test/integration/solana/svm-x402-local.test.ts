/**
 * The official x402 SVM path through the offline Solana chain (ops/solana/): an @x402/svm client with a
 * local kit key pair pays an official @x402/express seller charging `exact` USDC on
 * solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1; the official facilitator verifies, co-signs as fee payer and
 * settles on litesvm through the loopback JSON-RPC server. Balances move by exactly the price (the ledger's
 * pre/post token balances say the same); the same payment again settles nothing; a tampered transaction is
 * refused by the facilitator and by the chain itself (signature checking on for sends).
 */
import assert from 'node:assert/strict';
import express from 'express';
import { pino } from 'pino';
import {
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload } from '@x402/core/types';
import { paymentMiddleware } from '@x402/express';
import { wrapFetchWithPayment } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClientScheme } from '@x402/svm/exact/client';
import { ExactSvmScheme as ExactSvmServerScheme } from '@x402/svm/exact/server';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { associatedTokenAddress } from '../../../ops/solana/spl-token-layouts.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { postJson } from '../../support/post-json.js';

const NETWORK = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const PRICE_UNITS = 10_000n; // "$0.01" in USDC base units (6 decimals)
const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';

/** The payload's transaction with one character of its memo changed (same layout, same signatures). */
function tamperMemo(base64Wire: string): string {
  const wire = new Uint8Array(getBase64Encoder().encode(base64Wire));
  const tx = getTransactionDecoder().decode(wire);
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const memo = message.instructions.find((ix) => message.staticAccounts[ix.programAddressIndex] === MEMO_PROGRAM);
  assert.ok(memo?.data && memo.data.length > 0, 'the exact transaction carries a memo');
  const at = Buffer.from(wire).indexOf(Buffer.from(memo.data));
  assert.ok(at > 0);
  wire[at] = wire[at] === 0x61 ? 0x62 : 0x61; // 'a' ↔ 'b': still a hex memo
  return getBase64Decoder().decode(wire);
}

describe('x402 exact on the offline Solana chain (official @x402/svm client, seller and facilitator)', function () {
  this.timeout(60_000);
  const servers = new LoopbackServers();
  let solana: LocalSolana;
  let buyer: KeyPairSigner;
  let payTo: Address;
  let sellerUrl: string;
  let rpc: ReturnType<typeof createSolanaRpc>;
  let settled: { signature: string; payer: Address } | undefined;

  const usdcOf = async (owner: Address): Promise<bigint> => {
    const account = await associatedTokenAddress(owner, solana.mint);
    return BigInt((await rpc.getTokenAccountBalance(account).send()).value.amount);
  };
  const buyerClient = () =>
    new x402Client().register(NETWORK, new ExactSvmClientScheme(buyer, { rpcUrl: solana.rpcUrl }));

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    rpc = createSolanaRpc(solana.rpcUrl);
    buyer = await generateKeyPairSigner();
    payTo = (await generateKeyPairSigner()).address;
    await solana.faucet.fundUsdc(buyer.address, 1_000_000n);
    await solana.faucet.fundUsdc(payTo, 0n);
    const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: solana.facilitatorUrl }));
    resourceServer.register(NETWORK, new ExactSvmServerScheme());
    const app = express();
    app.use(
      paymentMiddleware(
        { 'GET /paid': { accepts: { scheme: 'exact', network: NETWORK, payTo, price: '$0.01' }, description: 'paid' } },
        resourceServer,
      ),
    );
    app.get('/paid', (_req, res) => void res.json({ paid: true }));
    sellerUrl = await servers.listen(app);
  });

  after(async () => {
    await servers.closeAll();
    await solana?.stop();
  });

  it('answers as devnet (genesis hash, USDC mint at the devnet address); the facilitator offers exact with its fee payer', async () => {
    assert.equal(await rpc.getGenesisHash().send(), 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG');
    assert.equal(await rpc.getHealth().send(), 'ok');
    assert.equal(solana.mint, '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
    const mint = (await rpc.getAccountInfo(solana.mint, { encoding: 'base64' }).send()).value;
    assert.equal(mint?.owner, 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
    assert.ok((await rpc.getBalance(solana.feePayer).send()).value > 0n);
    const supported = (await (await fetch(`${solana.facilitatorUrl}/supported`)).json()) as { kinds: unknown[] };
    assert.deepEqual(supported.kinds, [
      { x402Version: 2, scheme: 'exact', network: NETWORK, extra: { feePayer: solana.feePayer } },
    ]);
  });

  it('pays, settles on chain for exactly the price; the same payment again settles nothing', async () => {
    const sent: Record<string, string> = {};
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const header = request.headers.get('payment-signature');
      if (header) sent.header = header;
      return fetch(request);
    };
    const [buyerBefore, payToBefore] = [await usdcOf(buyer.address), await usdcOf(payTo)];
    const res = await wrapFetchWithPayment(recording, buyerClient())(`${sellerUrl}/paid`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { paid: true });
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(receipt.success, true);
    assert.equal(receipt.network, NETWORK);
    assert.equal(await usdcOf(buyer.address), buyerBefore - PRICE_UNITS);
    assert.equal(await usdcOf(payTo), payToBefore + PRICE_UNITS);

    const status = (await rpc.getSignatureStatuses([receipt.transaction as never]).send()).value[0];
    assert.equal(status?.err, null);
    assert.equal(status?.confirmationStatus, 'finalized');

    assert.ok(sent.header, 'the client sent a PAYMENT-SIGNATURE header');
    const again = await fetch(`${sellerUrl}/paid`, { headers: { 'payment-signature': sent.header } });
    assert.notEqual(again.status, 200, 'the same payment is not served twice');
    const payload = JSON.parse(Buffer.from(sent.header, 'base64').toString('utf8')) as PaymentPayload;
    const settleAgain = await postJson(`${solana.facilitatorUrl}/settle`, {
      x402Version: 2,
      paymentPayload: payload,
      paymentRequirements: payload.accepted,
    });
    assert.equal(settleAgain.status, 200);
    assert.equal(settleAgain.body.success, false, JSON.stringify(settleAgain.body));
    assert.equal(settleAgain.body.errorReason, 'duplicate_settlement');
    assert.equal(await usdcOf(buyer.address), buyerBefore - PRICE_UNITS);
    assert.equal(await usdcOf(payTo), payToBefore + PRICE_UNITS);
    settled = { signature: receipt.transaction, payer: buyer.address };
  });

  it("the ledger shows the settlement: the payer's and payee's token balances move by the price, the fee payer pays the fee", async () => {
    assert.ok(settled, 'runs after the payment');
    const tx = await rpc
      .getTransaction(settled.signature as never, { encoding: 'base64', maxSupportedTransactionVersion: 0 })
      .send();
    assert.ok(tx?.meta, 'the settlement is on the ledger');
    assert.equal(tx.meta.err, null);
    const byOwner = (balances: typeof tx.meta.preTokenBalances) =>
      new Map((balances ?? []).map((b) => [b.owner, BigInt(b.uiTokenAmount.amount)]));
    const [pre, post] = [byOwner(tx.meta.preTokenBalances), byOwner(tx.meta.postTokenBalances)];
    assert.equal(pre.get(buyer.address)! - post.get(buyer.address)!, PRICE_UNITS);
    assert.equal(post.get(payTo)! - pre.get(payTo)!, PRICE_UNITS);
    const feePayerIndex = 0;
    // The fee payer appears in no instruction: its whole decrease is the fee (2 signatures + priority fee).
    const feePaid = tx.meta.preBalances[feePayerIndex]! - tx.meta.postBalances[feePayerIndex]!;
    assert.equal(tx.meta.fee, feePaid);
    assert.equal(feePaid, 10_001n, '2 × 5,000 + ceil(1 µlamport × 20,000 units)');
    // The landed transaction bytes: a replay and a tampered copy are both refused by the chain itself.
    const wire = tx.transaction[0];
    await assert.rejects(
      rpc.sendTransaction(wire as never, { encoding: 'base64', skipPreflight: true }).send(),
      (err) =>
        isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE) &&
        isSolanaError(err.cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED),
    );
    const tampered = tamperMemo(wire);
    const simulated = await rpc.simulateTransaction(tampered as never, { encoding: 'base64', sigVerify: false }).send();
    assert.equal(simulated.value.err, null, 'sigVerify:false simulates without checking signatures');
    await assert.rejects(
      rpc.simulateTransaction(tampered as never, { encoding: 'base64', sigVerify: true }).send(),
      (err) => isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE),
    );
    await assert.rejects(
      rpc.sendTransaction(tampered as never, { encoding: 'base64', skipPreflight: true }).send(),
      (err) => isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE),
    );
  });

  it('a tampered payment transaction is refused by the facilitator and the seller, and moves nothing', async () => {
    const http = new x402HTTPClient(buyerClient());
    const challenge = await fetch(`${sellerUrl}/paid`);
    assert.equal(challenge.status, 402);
    const required = http.getPaymentRequiredResponse((name) => challenge.headers.get(name), await challenge.json());
    const payload = await buyerClient().createPaymentPayload(required);
    const transaction = (payload.payload as { transaction: string }).transaction;
    const forged = { ...payload, payload: { ...payload.payload, transaction: tamperMemo(transaction) } };
    const [buyerBefore, payToBefore] = [await usdcOf(buyer.address), await usdcOf(payTo)];

    const verified = await postJson(`${solana.facilitatorUrl}/verify`, {
      x402Version: 2,
      paymentPayload: forged,
      paymentRequirements: payload.accepted,
    });
    assert.equal(verified.status, 200);
    assert.equal(verified.body.isValid, false, JSON.stringify(verified.body));
    const res = await fetch(`${sellerUrl}/paid`, { headers: http.encodePaymentSignatureHeader(forged) });
    assert.equal(res.status, 402);
    const settle = await postJson(`${solana.facilitatorUrl}/settle`, {
      x402Version: 2,
      paymentPayload: forged,
      paymentRequirements: payload.accepted,
    });
    assert.equal(settle.body.success, false, JSON.stringify(settle.body));
    assert.equal(await usdcOf(buyer.address), buyerBefore);
    assert.equal(await usdcOf(payTo), payToBefore);
  });
});
