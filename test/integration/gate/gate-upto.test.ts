/**
 * `upto` through the gate, as through the middleware: the challenge advertises upto with the facilitator
 * address and Permit2; the official upto client's payment is verified; the origin (no payment code, only a
 * `Settlement-Overrides` response header) names the charge, the facilitator is asked to settle exactly that,
 * and the header never reaches the buyer; an override above the signed maximum, or one named on two header
 * lines, is 500 `settlement_override_invalid` with nothing settled and the body withheld.
 */
import assert from 'node:assert/strict';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentPayload, PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { buyer } from '../../unit/x402/x402-fixtures.js';
import { PAID_BODY, startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { GATE_SLUG, startOrigin, startTestGate, tableCatalogue, type TestGate, type TestOrigin } from './gate-fakes.js';

const FACILITATOR = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

describe('gate: upto, the charge named by the origin', function () {
  this.timeout(30_000);
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  let gate: TestGate;

  beforeEach(async () => {
    ({ facilitator, platform } = await startFakes());
    facilitator.on('/settle', (c) => ({
      body: {
        success: true,
        transaction: `0x${'5a'.repeat(32)}`,
        network: 'eip155:84532',
        payer: buyer.address,
        amount: c.body?.paymentRequirements?.amount,
      },
    }));
    origin = await startOrigin();
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url) });
    platform.on('/v1/gate/ledger', { status: 201, body: { id: 'led_1' } });
    gate = await startTestGate(platform, {
      FACILITATOR_URL: facilitator.url,
      FACILITATOR_ADDRESS: FACILITATOR,
      GATE_SCHEMES: 'upto',
    });
  });
  afterEach(async () => {
    await gate.app.ledger.flush();
    await gate.stop();
    await Promise.all([origin.stop(), facilitator.stop(), platform.stop()]);
  });

  async function uptoHeader(path: string): Promise<string> {
    const res = await fetch(`${gate.url}/${GATE_SLUG}${path}`);
    assert.equal(res.status, 402);
    const challenge = (await res.json()) as PaymentRequired;
    const accepted = challenge.accepts[0]!;
    assert.equal(accepted.scheme, 'upto');
    assert.equal(accepted.extra?.facilitatorAddress, FACILITATOR);
    const client = new x402Client().register('eip155:84532', new UptoEvmScheme(buyer));
    const payload = await client.createPaymentPayload({ ...challenge, accepts: [accepted] } as never);
    return encodePaymentPayload(payload as unknown as PaymentPayload);
  }

  it('settles what the origin charged (40 % of the maximum), without the override header reaching the buyer', async () => {
    const res = await fetch(`${gate.url}/${GATE_SLUG}/metered`, {
      headers: { 'PAYMENT-SIGNATURE': await uptoHeader('/metered') },
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(await res.text(), PAID_BODY);
    assert.equal(res.headers.get('settlement-overrides'), null);
    const [settle] = facilitator.callsTo('/settle');
    assert.equal(settle!.body.paymentRequirements.amount, '4000'); // 40 % of 10000
    assert.equal(decodePaymentResponseHeader(res.headers.get('payment-response')!).amount, '4000');
    await gate.app.ledger.flush();
    assert.equal(platform.callsTo('/v1/gate/ledger')[0]?.body.amount, '4000');
  });

  for (const [path, what] of [
    ['/overcharge', 'an override above the signed maximum'],
    ['/metered-twice', 'an override named twice (two header lines)'],
  ] as const) {
    it(`${what}: 500 settlement_override_invalid, nothing settled, body withheld`, async () => {
      const res = await fetch(`${gate.url}/${GATE_SLUG}${path}`, {
        headers: { 'PAYMENT-SIGNATURE': await uptoHeader(path) },
      });
      assert.equal(res.status, 500);
      const text = await res.text();
      assert.ok(!text.includes(PAID_BODY));
      assert.equal(JSON.parse(text).error_code, 'settlement_override_invalid');
      assert.equal(facilitator.callsTo('/settle').length, 0);
    });
  }
});
