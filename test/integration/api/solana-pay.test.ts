/**
 * Solana x402 `exact` payments through the whole pay path: the API (HTTP, PostgreSQL) with the offline
 * Solana chain as TREASURY_SOLANA_RPC_URL (ops/solana/local-solana.ts) and the real signer (SoftHSM Ed25519
 * keys). A payment answers the wallet-signed wire transaction (fee-payer slot empty); the official x402
 * facilitator verifies and settles it, and the balances move by exactly the price; the same payment again
 * (a retry with its Idempotency-Key replays the stored transaction) settles nothing. Refusals carry their
 * `pd_` decision (a per-payment cap, a blocklist naming a base58 payee), a malformed entry its own code, and
 * 64 concurrent payments against a daily cap pass exactly as many as fit.
 */
import assert from 'node:assert/strict';
import { pino } from 'pino';
import {
  createSolanaRpc,
  generateKeyPairSigner,
  getBase58Encoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
} from '@solana/kit';
import { ed25519 } from '@noble/curves/ed25519.js';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { associatedTokenAddress } from '../../../ops/solana/spl-token-layouts.js';
import { mintAgent, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import fs from 'node:fs';
import path from 'node:path';
import { postJson } from '../../support/post-json.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import express from 'express';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { paymentMiddleware } from '@x402/express';
import { ExactSvmScheme as ExactSvmServerScheme } from '@x402/svm/exact/server';
import { solanaSignedPaymentSchema } from '../../../src/shared/api-responses/pay-responses.js';
import { installPayFaultHooks } from '../../../src/api/pay/pay-fault-hooks.js';
import { verifyAuditChain } from '../../../src/api/audit/audit-ledger.js';
import { startApiProcess } from '../../support/api-process.js';
import { daySpentMicro } from '../../support/spend-totals.js';

const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const PRICE = 10_000n; // $0.01

describe('Solana payments (HTTP, SoftHSM Ed25519, offline chain, official facilitator)', function () {
  this.timeout(180_000);
  let solana: LocalSolana;
  let t: TestTreasury;
  let token: string;
  let rpc: ReturnType<typeof createSolanaRpc>;
  let payTo: Address;
  let sellerUrl: string;
  const servers = new LoopbackServers();
  /** Armed: the next reservation decided alone fails right after it committed, unsigned (a lost process). */
  let crashAfterReserve = false;

  const usdcOf = async (owner: string): Promise<bigint> => {
    const account = await associatedTokenAddress(owner as Address, solana.mint);
    const info = await rpc.getAccountInfo(account, { encoding: 'base64' }).send();
    if (!info.value) return 0n;
    return BigInt((await rpc.getTokenAccountBalance(account).send()).value.amount);
  };
  const requirementsFor = (overrides: Record<string, unknown> = {}) => ({
    scheme: 'exact',
    network: DEVNET,
    asset: solana.mint,
    amount: PRICE.toString(),
    payTo,
    maxTimeoutSeconds: 60,
    extra: { feePayer: solana.feePayer },
    ...overrides,
  });
  const newWallet = async (policy: Record<string, unknown>, funds = 1_000_000n) => {
    const res = await t.request('POST', '/v1/wallets', { token, body: { chain: 'solana-devnet', policy } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    if (funds > 0n) await solana.faucet.fundUsdc(res.body.address as Address, funds);
    return res.body as { id: string; address: string };
  };
  const pay = (walletId: string, requirements: Record<string, unknown>, key?: string) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token,
      body: { payment_requirements: requirements },
      ...(key ? { headers: { 'idempotency-key': key } } : {}),
    });
  const facilitator = (path: 'verify' | 'settle', requirements: Record<string, unknown>, transaction: string) =>
    postJson(`${solana.facilitatorUrl}/${path}`, {
      x402Version: 2,
      paymentPayload: { x402Version: 2, accepted: requirements, payload: { transaction } },
      paymentRequirements: requirements,
    });

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    rpc = createSolanaRpc(solana.rpcUrl);
    installPayFaultHooks({
      afterReserve: () => {
        if (!crashAfterReserve) return;
        crashAfterReserve = false;
        throw new Error('the process was lost after the reservation committed');
      },
    });
    // The offline chain answers from this test's own process: on a busy machine (the parallel suite beside it) a
    // call may wait past the default 3 s for its turn on the event loop; the RPC's bound is not what is tested.
    t = await startTestTreasury({
      extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl, TREASURY_RPC_TIMEOUT_MS: '20000' },
    });
    ({ apiKey: token } = await mintAgent(t, 'solana-pay'));
    payTo = (await generateKeyPairSigner()).address;
    await solana.faucet.fundUsdc(payTo, 0n);
    // The official seller: @x402/express charging $0.01 in USDC on devnet, through the local facilitator.
    const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: solana.facilitatorUrl }));
    resourceServer.register(DEVNET, new ExactSvmServerScheme());
    const app = express();
    app.use(
      paymentMiddleware(
        { 'GET /paid': { accepts: { scheme: 'exact', network: DEVNET, payTo, price: '$0.01' }, description: 'paid' } },
        resourceServer,
      ),
    );
    app.get('/paid', (_req, res) => void res.json({ paid: true }));
    sellerUrl = await servers.listen(app);
  });
  after(async () => {
    installPayFaultHooks({});
    await servers.closeAll();
    await t?.stop();
    await solana?.stop();
  });

  it('pays: the wallet signs the official exact transaction, the facilitator settles it, balances move by the price', async () => {
    const wallet = await newWallet({ per_tx_cap_usd: '1' });
    const requirements = requirementsFor();
    const res = await pay(wallet.id, requirements, 'sol-pay-1');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.authorization_id, /^auth_/);
    assert.match(res.body.decision_id, /^pd_/);
    assert.equal(res.body.wallet_id, wallet.id);
    assert.equal(res.body.network, DEVNET);
    assert.equal(res.body.asset, solana.mint);
    assert.equal(res.body.amount_usd, '0.01');
    assert.equal(res.body.scheme, 'exact');
    solanaSignedPaymentSchema.parse(res.body); // the reply the OpenAPI document and the SDKs describe

    // The wire transaction: fee payer first with its slot empty, the wallet's signature over the message.
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(res.body.transaction));
    const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    assert.equal(message.staticAccounts[0], solana.feePayer);
    assert.equal(tx.signatures[solana.feePayer], null);
    const signature = tx.signatures[wallet.address as Address]!;
    assert.ok(
      ed25519.verify(
        new Uint8Array(signature),
        new Uint8Array(tx.messageBytes),
        new Uint8Array(getBase58Encoder().encode(wallet.address)),
      ),
      'the wallet signature verifies',
    );
    const row = await t.db.knex('authorizations').where({ id: res.body.authorization_id }).first();
    assert.equal(row.from_address, wallet.address);
    assert.equal(row.to_address, payTo);
    assert.equal(row.asset, solana.mint);
    assert.equal(row.status, 'signed');
    assert.equal(row.nonce, res.body.solana_transfer.message_hash);

    const [walletBefore, payToBefore] = [await usdcOf(wallet.address), await usdcOf(payTo)];
    const verified = await facilitator('verify', requirements, res.body.transaction);
    assert.equal(verified.body.isValid, true, JSON.stringify(verified.body));
    const settled = await facilitator('settle', requirements, res.body.transaction);
    assert.equal(settled.body.success, true, JSON.stringify(settled.body));
    assert.equal(await usdcOf(wallet.address), walletBefore - PRICE);
    assert.equal(await usdcOf(payTo), payToBefore + PRICE);

    // A retry with the Idempotency-Key replays the stored transaction; settling it again moves nothing.
    const again = await pay(wallet.id, requirements, 'sol-pay-1');
    assert.equal(again.status, 200);
    assert.equal(again.body.transaction, res.body.transaction);
    assert.equal(again.body.authorization_id, res.body.authorization_id);
    const twice = await facilitator('settle', requirements, again.body.transaction);
    assert.equal(twice.body.success, false, JSON.stringify(twice.body));
    const history = await t.request('GET', `/v1/wallets/${wallet.id}/payments`, { token });
    assert.equal(history.status, 200, JSON.stringify(history.body));
    assert.deepEqual(
      history.body.payments.map((p: { id: string; payee: string }) => [p.id, p.payee]),
      [[res.body.authorization_id, payTo]],
    );
    assert.equal(await usdcOf(wallet.address), walletBefore - PRICE);
    assert.equal(await usdcOf(payTo), payToBefore + PRICE);
  });

  it('a reservation whose signature never left is signed over its stored message by the retry with its key', async () => {
    const wallet = await newWallet({ per_tx_cap_usd: '0.005' });
    const requirements = requirementsFor();
    // The key's first use is refused by the policy; the policy is raised; its next use is decided alone.
    const denied = await pay(wallet.id, requirements, 'sol-resume');
    assert.equal(denied.status, 403, JSON.stringify(denied.body));
    const raised = await t.request('PUT', `/v1/wallets/${wallet.id}/policy`, { token, body: { per_tx_cap_usd: '1' } });
    assert.equal(raised.status, 200, JSON.stringify(raised.body));
    crashAfterReserve = true;
    const lost = await pay(wallet.id, requirements, 'sol-resume');
    assert.equal(lost.status, 500, JSON.stringify(lost.body));
    const reserved = await t.db.knex('authorizations').where({ wallet_id: wallet.id }).first();
    assert.equal(reserved.status, 'reserved');

    const resumed = await pay(wallet.id, requirements, 'sol-resume');
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    assert.equal(resumed.body.authorization_id, reserved.id);
    assert.equal(resumed.body.solana_transfer.message_hash, reserved.nonce, 'the stored message, not a new one');
    assert.equal(resumed.body.solana_transfer.message, reserved.response.solana_transfer.message);
    const rows = await t.db.knex('authorizations').where({ wallet_id: wallet.id });
    assert.deepEqual(
      rows.map((r: { status: string }) => r.status),
      ['signed'],
    );
    const settled = await facilitator('settle', requirements, resumed.body.transaction);
    assert.equal(settled.body.success, true, JSON.stringify(settled.body));
  });

  it("pays the official seller's 402 challenge: the seller settles the wallet's transaction and serves", async () => {
    const wallet = await newWallet({ per_tx_cap_usd: '0.05' });
    const http = new x402HTTPClient(new x402Client());
    const challenge = await fetch(`${sellerUrl}/paid`);
    assert.equal(challenge.status, 402);
    const required = http.getPaymentRequiredResponse((name) => challenge.headers.get(name), await challenge.json());
    const accepted = required.accepts[0]!;
    const res = await pay(wallet.id, accepted as unknown as Record<string, unknown>);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [walletBefore, payToBefore] = [await usdcOf(wallet.address), await usdcOf(payTo)];
    const payload = {
      x402Version: 2,
      resource: required.resource,
      accepted,
      payload: { transaction: res.body.transaction },
    };
    const headers = http.encodePaymentSignatureHeader(payload);
    const paid = await fetch(`${sellerUrl}/paid`, { headers });
    assert.equal(paid.status, 200, await paid.clone().text());
    assert.deepEqual(await paid.json(), { paid: true });
    const receipt = decodePaymentResponseHeader(paid.headers.get('payment-response')!);
    assert.equal(receipt.success, true);
    assert.equal(receipt.payer, wallet.address);
    assert.equal(await usdcOf(wallet.address), walletBefore - PRICE);
    assert.equal(await usdcOf(payTo), payToBefore + PRICE);
    const again = await fetch(`${sellerUrl}/paid`, { headers });
    assert.notEqual(again.status, 200, 'the same payment is not served twice');
    assert.equal(await usdcOf(wallet.address), walletBefore - PRICE);
  });

  it('a seller memo is carried; two payments without an Idempotency-Key are two transactions', async () => {
    const wallet = await newWallet({});
    const first = await pay(wallet.id, requirementsFor({ extra: { feePayer: solana.feePayer, memo: 'order-42' } }));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(first.body.transaction));
    assert.ok(Buffer.from(tx.messageBytes).includes(Buffer.from('order-42')));
    // The same memo, payee and amount under the same blockhash is the same transaction: refused as a reused nonce.
    // A blockhash that moved between the two (a busy machine) makes another transaction, signed as such: ask again
    // until two asks meet the same blockhash, and never is one message signed twice.
    let same = await pay(wallet.id, requirementsFor({ extra: { feePayer: solana.feePayer, memo: 'order-42' } }));
    let signedLast = first.body.solana_transfer.message_hash as string;
    for (let i = 0; i < 5 && same.status === 200; i++) {
      assert.notEqual(same.body.solana_transfer.message_hash, signedLast, 'one message is never signed twice');
      signedLast = same.body.solana_transfer.message_hash as string;
      same = await pay(wallet.id, requirementsFor({ extra: { feePayer: solana.feePayer, memo: 'order-42' } }));
    }
    assert.equal(same.status, 409, JSON.stringify(same.body));
    assert.equal(same.body.error_code, 'nonce_already_used');
    assert.equal(same.body.nonce, signedLast);
    const second = await pay(wallet.id, requirementsFor());
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.notEqual(second.body.transaction, first.body.transaction);
    assert.notEqual(second.body.solana_transfer.message_hash, first.body.solana_transfer.message_hash);
  });

  it('policy refusals carry a pd_ decision: the per-payment cap, and a blocklist naming the base58 payee', async () => {
    const capped = await newWallet({ per_tx_cap_usd: '0.005' });
    const overCap = await pay(capped.id, requirementsFor());
    assert.equal(overCap.status, 403, JSON.stringify(overCap.body));
    assert.equal(overCap.body.error_code, 'policy_denied');
    assert.equal(overCap.body.rule, 'per_tx_cap_usd');
    assert.match(overCap.body.decision_id, /^pd_/);

    const blocking = await newWallet({ counterparty_blocklist: [payTo] });
    const blocked = await pay(blocking.id, requirementsFor());
    assert.equal(blocked.status, 403, JSON.stringify(blocked.body));
    assert.equal(blocked.body.rule, 'counterparty_blocklist');
    assert.match(blocked.body.decision_id, /^pd_/);
    const decision = await t.db.knex('policy_decisions').where({ id: blocked.body.decision_id }).first();
    assert.equal(decision.to_address, payTo);
    const other = (await generateKeyPairSigner()).address;
    await solana.faucet.fundUsdc(other, 0n);
    const allowed = await pay(blocking.id, requirementsFor({ payTo: other }));
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
  });

  it('refuses what cannot be paid from this wallet, with stable codes, before anything is recorded', async () => {
    const wallet = await newWallet({});
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [requirementsFor({ payTo: wallet.address }), 400, 'svm_requirements_invalid'],
      [requirementsFor({ extra: { feePayer: wallet.address } }), 400, 'svm_requirements_invalid'],
      [requirementsFor({ extra: {} }), 400, 'invalid_request'],
      [requirementsFor({ asset: payTo }), 400, 'asset_not_supported'],
      [requirementsFor({ scheme: 'upto' }), 400, 'scheme_not_supported'],
      [requirementsFor({ payTo: `0x${'12'.repeat(20)}` }), 400, 'invalid_request'],
      [
        requirementsFor({
          network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
          asset: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
        }),
        400,
        'network_not_supported',
      ],
    ];
    for (const [requirements, status, code] of cases) {
      const res = await pay(wallet.id, requirements);
      assert.equal(res.status, status, `${code}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error_code, code, JSON.stringify(res.body));
    }
    const transfer = await t.request('POST', `/v1/wallets/${wallet.id}/transfer`, {
      token,
      body: { to: `0x${'12'.repeat(20)}`, amount_usd: '0.01' },
    });
    assert.equal(transfer.status, 400, JSON.stringify(transfer.body));
    assert.equal(transfer.body.error_code, 'transfer_not_supported');
    assert.equal(
      await t.db
        .knex('authorizations')
        .where({ wallet_id: wallet.id })
        .count()
        .first()
        .then((r) => Number(r!.count)),
      0,
    );
  });

  it('a Solana challenge paid from an EVM wallet names the Solana chain to create a wallet on; evaluate takes base58', async () => {
    // An agent with no Solana wallet yet (this suite's own has some: those would be named instead).
    const { apiKey } = await mintAgent(t, 'evm-only');
    const evm = await t.request('POST', '/v1/wallets', { token: apiKey, body: { chain: 'base-sepolia' } });
    const res = await t.request('POST', `/v1/wallets/${evm.body.id}/pay`, {
      token: apiKey,
      body: { payment_requirements: requirementsFor() },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'network_not_supported');
    assert.equal(res.body.recovery?.kind, 'create_wallet');
    assert.equal(res.body.recovery?.chain, 'solana-devnet');

    const wallet = await newWallet({ counterparty_allowlist: [payTo] }, 0n);
    const dryRun = (to: string) =>
      t.request('POST', `/v1/wallets/${wallet.id}/policy/evaluate`, { token, body: { to, amount_usd: '0.01' } });
    assert.equal((await dryRun(payTo)).body.allowed, true);
    const other = await dryRun((await generateKeyPairSigner()).address);
    assert.equal(other.body.allowed, false);
    assert.equal(other.body.violations[0].rule, 'counterparty_allowlist');
  });

  it('the hostile-input table against every field of a Solana entry: 400 (or paid), never a 500, nothing left reserved', async () => {
    const hostile = JSON.parse(
      fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
    ) as Record<string, unknown[]>;
    const wallet = await newWallet({}, 0n);
    const values = [
      ...hostile.any!,
      ...hostile.evm_address!,
      ...hostile.raw_token_amount!,
      ...hostile.caip2_network!,
      ...hostile.free_text!,
      '1111111111111111111111111111111',
      `${payTo}1`,
      'é'.repeat(129),
    ];
    const fields: Array<(v: unknown) => Record<string, unknown>> = [
      (v) => requirementsFor({ payTo: v }),
      (v) => requirementsFor({ asset: v }),
      (v) => requirementsFor({ amount: v }),
      (v) => requirementsFor({ network: v }),
      (v) => requirementsFor({ maxTimeoutSeconds: v }),
      (v) => requirementsFor({ extra: { feePayer: v } }),
      (v) => requirementsFor({ extra: { feePayer: solana.feePayer, memo: v } }),
    ];
    for (const field of fields) {
      for (const value of values) {
        const body = field(value);
        const res = await pay(wallet.id, body);
        // A value the schema takes (a number of seconds, a memo of plain text) pays; anything else is a 400.
        assert.ok(
          [200, 400].includes(res.status),
          `${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`,
        );
      }
    }
    const signedRows = await t.db.knex('authorizations').where({ wallet_id: wallet.id }).whereNot({ status: 'signed' });
    assert.deepEqual(signedRows, [], 'nothing left reserved');
  });

  it('64 concurrent payments through two API processes against a daily cap pass exactly as many as fit', async () => {
    const second = await startApiProcess(t.db, t.signer, {
      TREASURY_SOLANA_RPC_URL: solana.rpcUrl,
      TREASURY_RPC_TIMEOUT_MS: '20000',
      TREASURY_EXIT_WITH_PARENT: '1',
    });
    try {
      const wallet = await newWallet({ daily_cap_usd: '0.25' });
      const viaSecond = async () => {
        const res = await fetch(`${second.url}/v1/wallets/${wallet.id}/pay`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ payment_requirements: requirementsFor() }),
        });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      };
      const answers = await Promise.all(
        Array.from({ length: 64 }, (_, i) => (i % 2 === 0 ? pay(wallet.id, requirementsFor()) : viaSecond())),
      );
      const statuses = answers.map((a) => a.status);
      const failed = answers.find((a) => a.status !== 200 && a.status !== 403);
      assert.equal(failed, undefined, JSON.stringify(failed?.body));
      assert.equal(statuses.filter((s) => s === 200).length, 25);
      assert.ok(answers.filter((a) => a.status === 403).every((a) => a.body.rule === 'daily_cap_usd'));
      const hashes = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.solana_transfer.message_hash));
      assert.equal(hashes.size, 25, 'every allowed payment is its own transaction');
      assert.equal(await daySpentMicro(t.db.knex, wallet.id), '250000');
      assert.equal((await verifyAuditChain(t.db.knex, wallet.id)).ok, true);
    } finally {
      await second.stop();
    }
  });
});
