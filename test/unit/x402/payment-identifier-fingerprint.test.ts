/**
 * The pure parts of the `payment-identifier` rule: the fingerprint (src/x402/seller/payment-identifier-fingerprint.ts)
 * changes with every field it binds and with nothing else (key order), and reading the id
 * (src/x402/seller/payment-identifier-rule.ts) refuses malformed ids and never compiles the buyer's schema.
 */
import assert from 'node:assert/strict';
import {
  bodySha256,
  canonicalJson,
  paymentFingerprint,
  type FingerprintInput,
} from '../../../src/x402/seller/payment-identifier-fingerprint.js';
import { readPaymentIdentifier } from '../../../src/x402/seller/payment-identifier-rule.js';
import type { PaymentPayload } from '../../../src/x402/wire-schemas.js';
import { requirements, signExactPayment } from './x402-fixtures.js';

async function input(): Promise<FingerprintInput> {
  const payment = await signExactPayment(requirements());
  return {
    payment,
    payer: (payment.payload as { authorization: { from: string } }).authorization.from,
    method: 'GET',
    target: '/paid?q=1',
    accepted: requirements(),
    bodySha256: bodySha256(undefined),
  };
}

const withId = (payment: PaymentPayload, ext: unknown): PaymentPayload =>
  ({ ...payment, extensions: { 'payment-identifier': ext } }) as PaymentPayload;

describe('payment-identifier: fingerprint and id', () => {
  it('binds payer, method, target, accepted terms, body and the signed payment; ignores key order', async () => {
    const base = await input();
    const fp = paymentFingerprint(base);
    assert.match(fp, /^[0-9a-f]{64}$/);
    const reordered = JSON.parse(canonicalJson(base.payment)) as PaymentPayload;
    assert.equal(paymentFingerprint({ ...base, payment: { ...reordered } }), fp);
    assert.equal(paymentFingerprint({ ...base, payer: base.payer.toUpperCase().replace('0X', '0x') }), fp);
    const changed: Array<Partial<FingerprintInput>> = [
      { payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66' },
      { method: 'POST' },
      { target: '/paid?q=2' },
      { accepted: requirements({ amount: '20000' }) },
      { bodySha256: bodySha256('{}') },
      { payment: await signExactPayment(requirements()) },
    ];
    for (const change of changed)
      assert.notEqual(paymentFingerprint({ ...base, ...change }), fp, Object.keys(change)[0]);
    const sig = base.payment.payload as { signature: string };
    const forged = { ...base.payment, payload: { ...base.payment.payload, signature: `0x${'11'.repeat(65)}` } };
    assert.notEqual(sig.signature, forged.payload.signature);
    assert.notEqual(paymentFingerprint({ ...base, payment: forged as PaymentPayload }), fp, 'a made-up signature');
  });

  it('reads a valid id; refuses malformed ones and a missing required one; ignores the buyer schema', async () => {
    const payment = await signExactPayment(requirements());
    const id = 'pay_0123456789abcdef';
    assert.deepEqual(readPaymentIdentifier(withId(payment, { info: { required: false, id } }), false), {
      kind: 'id',
      id,
    });
    assert.deepEqual(readPaymentIdentifier(payment, false), { kind: 'none' });
    const missing = readPaymentIdentifier(payment, true);
    assert.equal(
      missing.kind === 'refused' && (missing.answer.body as { error_code: string }).error_code,
      'payment_identifier_required',
    );
    for (const bad of ['short', 'a'.repeat(129), 'pay_0123456789abcdé', 7, null, ['pay_0123456789abcdef']]) {
      const read = readPaymentIdentifier(withId(payment, { info: { required: false, id: bad } }), false);
      assert.equal(
        read.kind === 'refused' && (read.answer.body as { error_code: string }).error_code,
        'payment_identifier_invalid',
      );
    }
    // A schema whose pattern would reject the id (or be catastrophic to compile) is not compiled.
    const hostileSchema = { type: 'object', properties: { id: { type: 'string', pattern: '^(a+)+$' } } };
    assert.deepEqual(
      readPaymentIdentifier(withId(payment, { info: { required: false, id }, schema: hostileSchema }), false),
      {
        kind: 'id',
        id,
      },
    );
  });
});
