/**
 * Seller middleware against the official buyer stack: `@x402/fetch` `wrapFetchWithPayment` with `x402Client` +
 * `ExactEvmScheme` reads our 402, pays with PAYMENT-SIGNATURE and reads our receipt; v1 payments on X-PAYMENT
 * are matched and forwarded to the facilitator as v1.
 */
import assert from 'node:assert/strict';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { wrapFetchWithPayment } from '@x402/fetch';
import { encodeBase64Json } from '../../../src/x402/base64-json.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { buyer, officialClient, signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { PAID_BODY, useSellerAppPerTest, TX_HASH } from './x402-fakes.js';

describe('x402 Koa middleware: official clients', () => {
  const { facilitator, app } = useSellerAppPerTest();

  it('@x402/fetch pays our challenge and reads our receipt', async () => {
    const paidFetch = wrapFetchWithPayment(fetch, officialClient());
    const res = await paidFetch(`${app.url}/paid`);
    assert.equal(res.status, 200);
    assert.ok((await res.text()).includes(PAID_BODY));
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(receipt.transaction, TX_HASH);
    assert.equal(receipt.payer, buyer.address);
    const verify = facilitator.callsTo('/verify')[0]!;
    assert.equal(verify.body.paymentPayload.payload.authorization.from, buyer.address);
  });

  it('a v1 payment on X-PAYMENT is matched by scheme and network and sent to the facilitator as v1', async () => {
    const c = (await (await fetch(`${app.url}/paid`)).json()) as PaymentRequired;
    const v2 = await signExactPayment(c.accepts[0]!);
    const v1 = { x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: v2.payload };
    const res = await fetch(`${app.url}/paid`, { headers: { 'X-PAYMENT': encodeBase64Json(v1) } });
    assert.equal(res.status, 200);
    const verify = facilitator.callsTo('/verify')[0]!;
    assert.equal(verify.body.x402Version, 1);
    assert.equal(verify.body.paymentRequirements.maxAmountRequired, '10000');
    assert.equal(verify.body.paymentRequirements.network, 'base-sepolia');
    const wrongNetwork = { ...v1, network: 'base', payload: (await signExactPayment(c.accepts[0]!)).payload };
    assert.equal(
      (await fetch(`${app.url}/paid`, { headers: { 'X-PAYMENT': encodeBase64Json(wrongNetwork) } })).status,
      402,
    );
  });
});
