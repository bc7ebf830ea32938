/**
 * The local x402 facilitator (official x402Facilitator + EVM exact scheme) against a real anvil, driven
 * by the official client packages: /supported lists exact (and upto, see upto-permit2.test.ts) on
 * eip155:84532; a payload built by x402Client + ExactEvmScheme (default 2.27 spend controls: the token
 * sits at the Base Sepolia USDC address, so it is a recognised default asset) verifies and settles on
 * chain, moving exactly the amount, with a mined tx hash in `transaction` and `txHash`; settling the
 * same payload again fails (re-verifying names the used nonce); HTTPFacilitatorClient
 * accepts every reply; tampered payloads are invalid with the official reasons; 400 / 500 / 404 shapes.
 */
import assert from 'node:assert/strict';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { anvilDevAccount, fundFromFaucet, readTokenBalance, useTestChain } from '../../support/chain-harness.js';
import { assertSettledOnChain, postJson } from '../../support/post-json.js';

describe('sandbox x402 facilitator (official @x402 packages)', function () {
  this.timeout(60_000);
  const chain = useTestChain();
  const payer = anvilDevAccount(2);
  const payTo = anvilDevAccount(3).address;
  const client = () =>
    new x402Client().register('eip155:84532', new ExactEvmScheme(privateKeyToAccount(payer.privateKey)));

  const paymentRequired = (amount = '10000'): PaymentRequired => ({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/paid', description: 'sandbox test resource', mimeType: 'application/json' },
    accepts: [
      {
        scheme: 'exact',
        network: 'eip155:84532',
        asset: chain.usdc,
        amount,
        payTo,
        maxTimeoutSeconds: 120,
        extra: { name: 'USDC', version: '2' },
      },
    ],
  });
  const requestBody = (paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements) => ({
    x402Version: 2,
    paymentPayload,
    paymentRequirements,
  });

  before(async () => {
    await fundFromFaucet(chain, payer.address, '5');
  });

  it('GET /supported lists {x402Version: 2, scheme: exact | upto, network: eip155:84532} and the signer', async () => {
    const res = await fetch(`${chain.facilitatorUrl}/supported`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { kinds: Array<Record<string, unknown>>; signers: Record<string, string[]> };
    assert.ok(
      body.kinds.some((k) => k.x402Version === 2 && k.scheme === 'exact' && k.network === 'eip155:84532'),
      JSON.stringify(body.kinds),
    );
    // upto (Permit2 witness) is served since Permit2 and the upto proxy are on the chain (upto-permit2.test.ts).
    assert.ok(
      body.kinds.some((k) => k.x402Version === 2 && k.scheme === 'upto' && k.network === 'eip155:84532'),
      JSON.stringify(body.kinds),
    );
    assert.deepEqual(body.signers['eip155:*'], [chain.facilitatorAddress]);
  });

  it('an official client payload verifies, settles on chain for exactly the amount, and fails when settled twice', async () => {
    const required = paymentRequired('10000');
    const requirements = required.accepts[0]!;
    const payload = await client().createPaymentPayload(required);
    assert.equal(payload.x402Version, 2);

    const verified = await postJson(`${chain.facilitatorUrl}/verify`, requestBody(payload, requirements));
    assert.equal(verified.status, 200);
    assert.equal(verified.body.isValid, true, JSON.stringify(verified.body));
    assert.equal(verified.body.payer, payer.address);

    const [payerBefore, payToBefore] = await Promise.all([
      readTokenBalance(chain, payer.address),
      readTokenBalance(chain, payTo),
    ]);
    const settled = await postJson(`${chain.facilitatorUrl}/settle`, requestBody(payload, requirements));
    await assertSettledOnChain(chain, settled, payer.address);
    assert.equal(await readTokenBalance(chain, payer.address), payerBefore - 10_000n);
    assert.equal(await readTokenBalance(chain, payTo), payToBefore + 10_000n);

    const again = await postJson(`${chain.facilitatorUrl}/settle`, requestBody(payload, requirements));
    assert.equal(again.status, 200);
    assert.equal(again.body.success, false, JSON.stringify(again.body));
    assert.equal(again.body.transaction, '');
    assert.equal(again.body.txHash, '');
    assert.equal(again.body.errorReason, 'invalid_exact_evm_nonce_already_used');
    assert.equal(await readTokenBalance(chain, payTo), payToBefore + 10_000n);

    // Verify after settlement: the on-chain simulation now fails, and the Multicall3 diagnosis names the cause.
    const reverify = await postJson(`${chain.facilitatorUrl}/verify`, requestBody(payload, requirements));
    assert.equal(reverify.status, 200);
    assert.equal(reverify.body.isValid, false);
    assert.equal(reverify.body.invalidReason, 'invalid_exact_evm_nonce_already_used', JSON.stringify(reverify.body));
  });

  it('HTTPFacilitatorClient accepts our /supported, /verify and /settle replies', async () => {
    const facilitator = new HTTPFacilitatorClient({ url: `${chain.facilitatorUrl}/`, timeoutMs: 20_000 });
    const supported = await facilitator.getSupported();
    assert.ok(supported.kinds.some((k) => k.x402Version === 2 && k.scheme === 'exact' && k.network === 'eip155:84532'));

    const required = paymentRequired('25000');
    const requirements = required.accepts[0]!;
    const payload = await client().createPaymentPayload(required);
    const verified = await facilitator.verify(payload, requirements);
    assert.equal(verified.isValid, true, JSON.stringify(verified));
    const before = await readTokenBalance(chain, payTo);
    const settled = await facilitator.settle(payload, requirements);
    assert.equal(settled.success, true, JSON.stringify(settled));
    assert.match(settled.transaction, /^0x[0-9a-f]{64}$/);
    assert.equal(settled.network, 'eip155:84532');
    assert.equal(await readTokenBalance(chain, payTo), before + 25_000n);

    const replay = await facilitator.settle(payload, requirements);
    assert.equal(replay.success, false);
  });

  it('tampered payloads are invalid (HTTP 200) with the official reasons and move nothing', async () => {
    const required = paymentRequired('10000');
    const requirements = required.accepts[0]!;
    const payload = await client().createPaymentPayload(required);
    const auth = (payload.payload as { authorization: Record<string, string> }).authorization;
    const withAuth = (changes: Record<string, string>): PaymentPayload => ({
      ...payload,
      payload: { ...payload.payload, authorization: { ...auth, ...changes } },
    });
    const before = await readTokenBalance(chain, payTo);

    const cases: Array<[string, PaymentPayload, PaymentRequirements, string]> = [
      ['value changed', withAuth({ value: '10001' }), requirements, 'invalid_exact_evm_signature'],
      [
        'other payTo required',
        payload,
        { ...requirements, payTo: anvilDevAccount(7).address },
        'invalid_exact_evm_recipient_mismatch',
      ],
      [
        'wrong domain name',
        payload,
        { ...requirements, extra: { name: 'USD Coin', version: '2' } },
        'invalid_exact_evm_signature',
      ],
      [
        'higher amount required',
        payload,
        { ...requirements, amount: '20000' },
        'invalid_exact_evm_payload_authorization_value_mismatch',
      ],
    ];
    for (const [label, p, r, reason] of cases) {
      const verified = await postJson(`${chain.facilitatorUrl}/verify`, requestBody(p, r));
      assert.equal(verified.status, 200, label);
      assert.equal(verified.body.isValid, false, label);
      assert.equal(verified.body.invalidReason, reason, `${label}: ${JSON.stringify(verified.body)}`);
      const settled = await postJson(`${chain.facilitatorUrl}/settle`, requestBody(p, r));
      assert.equal(settled.status, 200, label);
      assert.equal(settled.body.success, false, label);
    }
    assert.equal(await readTokenBalance(chain, payTo), before);
  });

  it('400 {error} without paymentPayload / paymentRequirements, 500 {error} when the facilitator throws, 404 elsewhere', async () => {
    for (const body of [
      {},
      { x402Version: 2 },
      { x402Version: 2, paymentPayload: {} },
      { x402Version: 2, paymentRequirements: {} },
    ]) {
      for (const route of ['verify', 'settle']) {
        const r = await postJson(`${chain.facilitatorUrl}/${route}`, body);
        assert.equal(r.status, 400, `${route} ${JSON.stringify(body)}`);
        assert.equal(typeof r.body.error, 'string');
      }
    }
    const bad = await fetch(`${chain.facilitatorUrl}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    assert.equal(bad.status, 400);

    // A network nobody registered: x402Facilitator throws → 500 {error}.
    const required = paymentRequired();
    const payload = await client().createPaymentPayload(required);
    const foreign = { ...required.accepts[0]!, network: 'eip155:1' as const };
    const thrown = await postJson(
      `${chain.facilitatorUrl}/verify`,
      requestBody({ ...payload, accepted: foreign }, foreign),
    );
    assert.equal(thrown.status, 500);
    assert.match(String(thrown.body.error), /No facilitator registered/);

    assert.equal((await fetch(`${chain.facilitatorUrl}/nope`)).status, 404);
    assert.equal((await fetch(`${chain.facilitatorUrl}/verify`)).status, 405);
    assert.deepEqual(await (await fetch(`${chain.facilitatorUrl}/health`)).json(), { status: 'ok' });
  });

  it('counts requests by route and outcome and observes latency', async () => {
    const text = await chain.registry.metrics();
    assert.match(text, /treasury_sandbox_facilitator_requests_total\{route="settle",outcome="success"\} [1-9]/);
    assert.match(text, /treasury_sandbox_facilitator_requests_total\{route="verify",outcome="valid"\} [1-9]/);
    assert.match(text, /treasury_sandbox_facilitator_requests_total\{route="verify",outcome="bad_request"\} [1-9]/);
    assert.match(text, /treasury_sandbox_facilitator_requests_total\{route="verify",outcome="error"\} [1-9]/);
    assert.match(text, /treasury_sandbox_facilitator_request_seconds_count\{route="settle"\} [1-9]/);
  });
});
