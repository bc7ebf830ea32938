/**
 * The gate sells on Solana as the middleware does: with GATE_SOLANA_FACILITATOR_URL, a catalogue seller with a
 * proven Solana pay-to (`solana_pay_to`) is offered on Solana next to Base, the entry naming the facilitator's
 * fee payer; the official `@x402/svm` client pays through the gate on the offline chain (ops/solana/), the
 * origin answers, balances move by exactly the price and the platform hears the signature; the same payment
 * again settles nothing. A seller with a Solana pay-to only is sold on Solana only; without the variable the
 * gate sells on Base alone.
 */
import assert from 'node:assert/strict';
import { createSolanaRpc, generateKeyPairSigner, type Address, type KeyPairSigner } from '@solana/kit';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { wrapFetchWithPayment } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClientScheme } from '@x402/svm/exact/client';
import { pino } from 'pino';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { associatedTokenAddress } from '../../../ops/solana/spl-token-layouts.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { PAID_BODY, startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { GATE_SLUG, startOrigin, startTestGate, tableCatalogue, type TestGate, type TestOrigin } from './gate-fakes.js';

const PRICE_UNITS = 10_000n;

describe('gate on Solana (official @x402/svm client, local chain and facilitator)', function () {
  this.timeout(90_000);
  let solana: LocalSolana;
  let rpc: ReturnType<typeof createSolanaRpc>;
  let buyer: KeyPairSigner;
  let payTo: Address;
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  const gates: TestGate[] = [];

  const usdcOf = async (owner: Address): Promise<bigint> => {
    const account = await associatedTokenAddress(owner, solana.mint);
    return BigInt((await rpc.getTokenAccountBalance(account).send()).value.amount);
  };
  const gateWith = async (overrides: Record<string, unknown>, env: Record<string, string> = {}) => {
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url, overrides) });
    const gate = await startTestGate(platform, {
      FACILITATOR_URL: facilitator.url,
      GATE_VERIFY_TIMEOUT_MS: '10000',
      GATE_SETTLE_TIMEOUT_MS: '10000',
      GATE_MAX_HELD_BYTES: '65536',
      ...env,
    });
    gates.push(gate);
    return gate;
  };
  const challengeOf = async (gate: TestGate) =>
    (await (await fetch(`${gate.url}/${GATE_SLUG}/paid`)).json()) as PaymentRequired;

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    rpc = createSolanaRpc(solana.rpcUrl);
    buyer = await generateKeyPairSigner();
    payTo = (await generateKeyPairSigner()).address;
    await solana.faucet.fundUsdc(buyer.address, 1_000_000n);
    await solana.faucet.fundUsdc(payTo, 0n);
    ({ facilitator, platform } = await startFakes());
    platform.on('/v1/gate/ledger', { status: 201, body: { id: 'led_1' } });
    origin = await startOrigin();
  });

  after(async () => {
    for (const gate of gates) {
      await gate.app.ledger.flush();
      await gate.stop();
    }
    await Promise.all([origin?.stop(), facilitator?.stop(), platform?.stop()]);
    await solana?.stop();
  });

  it('offers Base and Solana; the official client pays on Solana through the gate; a replay settles nothing', async () => {
    const gate = await gateWith({ solana_pay_to: payTo }, { GATE_SOLANA_FACILITATOR_URL: solana.facilitatorUrl });
    const c = await challengeOf(gate);
    assert.deepEqual(
      c.accepts.map((a) => [a.network, a.payTo]),
      [
        ['eip155:84532', '0x209693Bc6afc0C5328bA36FaF03C514EF312287C'],
        [solana.network, payTo],
      ],
    );
    assert.deepEqual(c.accepts[1]!.extra, { feePayer: solana.feePayer });

    const sent: { header?: string } = {};
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      sent.header = request.headers.get('payment-signature') ?? sent.header;
      return fetch(request);
    };
    const client = new x402Client().register(
      solana.network,
      new ExactSvmClientScheme(buyer, { rpcUrl: solana.rpcUrl }),
    );
    const [buyerBefore, payToBefore] = [await usdcOf(buyer.address), await usdcOf(payTo)];
    const runs = origin.runs;
    const res = await wrapFetchWithPayment(recording, client)(`${gate.url}/${GATE_SLUG}/paid`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok((await res.text()).includes(PAID_BODY));
    assert.equal(origin.runs, runs + 1);
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(receipt.network, solana.network);
    assert.equal(await usdcOf(buyer.address), buyerBefore - PRICE_UNITS);
    assert.equal(await usdcOf(payTo), payToBefore + PRICE_UNITS);
    assert.equal(facilitator.callsTo('/settle').length, 0, 'the EVM facilitator was not asked');

    await gate.app.ledger.flush();
    const row = platform.callsTo('/v1/gate/ledger').at(-1)?.body;
    assert.deepEqual([row?.tx_hash, row?.payer, row?.network], [receipt.transaction, buyer.address, solana.network]);

    const again = await fetch(`${gate.url}/${GATE_SLUG}/paid`, { headers: { 'payment-signature': sent.header! } });
    assert.equal(again.status, 402);
    assert.equal(origin.runs, runs + 1, 'the origin is not called again');
    assert.equal(await usdcOf(payTo), payToBefore + PRICE_UNITS);
  });

  it('a seller with a Solana pay-to only is sold on Solana only; without a Solana facilitator the gate sells on Base alone', async () => {
    const solanaOnly = await gateWith(
      { pay_to: null, solana_pay_to: payTo },
      { GATE_SOLANA_FACILITATOR_URL: solana.facilitatorUrl },
    );
    assert.deepEqual(
      (await challengeOf(solanaOnly)).accepts.map((a) => a.network),
      [solana.network],
    );
    const baseOnly = await gateWith({ solana_pay_to: payTo });
    assert.deepEqual(
      (await challengeOf(baseOnly)).accepts.map((a) => a.network),
      ['eip155:84532'],
    );
  });
});
