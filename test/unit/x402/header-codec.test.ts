/**
 * x402 wire codecs: round trips with the official @x402/core/http encoders and decoders in both directions,
 * the facilitator reply normalisation, and the hostile-input table (every bad header is a typed
 * X402DecodeError, never another exception).
 */
import assert from 'node:assert/strict';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import { decodeBase64Json, encodeBase64Json, MAX_X402_HEADER_BYTES } from '../../../src/x402/base64-json.js';
import {
  decodePaymentPayload,
  decodePaymentRequired,
  decodeSettlementReceipt,
  encodePaymentPayload,
  encodePaymentRequired,
  encodeSettlementReceipt,
  readPaymentHeader,
} from '../../../src/x402/header-codec.js';
import { parseJsonSafely } from '../../../src/x402/safe-json.js';
import { facilitatorSettleReplySchema, facilitatorVerifyReplySchema } from '../../../src/x402/wire-schemas.js';
import { X402DecodeError } from '../../../src/x402/x402-decode-error.js';
import { challenge, hostile, officialClient, requirements, signExactPayment } from './x402-fixtures.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64');

function assertDecodeError(fn: () => unknown, reason?: string) {
  assert.throws(
    fn,
    (err: unknown) => err instanceof X402DecodeError && (reason === undefined || err.reason === reason),
    `expected X402DecodeError${reason ? ` ${reason}` : ''}`,
  );
}

describe('x402 codecs: official round trips', () => {
  it('our challenge decodes with decodePaymentRequiredHeader, and theirs with ours', () => {
    const ours = challenge([
      requirements(),
      requirements({
        scheme: 'upto',
        extra: { name: 'USDC', version: '2', facilitatorAddress: '0x1111111111111111111111111111111111111111' },
      }),
    ]);
    assert.deepEqual(decodePaymentRequiredHeader(encodePaymentRequired(ours)), ours);
    const theirs = encodePaymentRequiredHeader(ours as Parameters<typeof encodePaymentRequiredHeader>[0]);
    assert.deepEqual(decodePaymentRequired(theirs), ours);
  });

  it('a payment made by the official x402Client decodes with ours, and ours with decodePaymentSignatureHeader', async () => {
    const official = await officialClient().createPaymentPayload(
      challenge() as Parameters<ReturnType<typeof officialClient>['createPaymentPayload']>[0],
    );
    const header = encodePaymentSignatureHeader(official);
    const decoded = decodePaymentPayload(header);
    assert.equal(decoded.x402Version, 2);
    assert.deepEqual(JSON.parse(JSON.stringify(decoded)), JSON.parse(JSON.stringify(official)));
    const mine = await signExactPayment(requirements());
    assert.deepEqual(decodePaymentSignatureHeader(encodePaymentPayload(mine)), mine);
  });

  it('receipts: ours carry transaction and txHash and decode officially; official ones gain txHash', () => {
    const tx = `0x${'ab'.repeat(32)}`;
    const ours = encodeSettlementReceipt({
      success: true,
      transaction: tx,
      network: 'eip155:84532',
      payer: '0x2c7536E3605D9C16a7a3D7b1898e529396a65c23',
    });
    assert.deepEqual(decodePaymentResponseHeader(ours), {
      success: true,
      transaction: tx,
      txHash: tx,
      network: 'eip155:84532',
      payer: '0x2c7536E3605D9C16a7a3D7b1898e529396a65c23',
    });
    const theirs = encodePaymentResponseHeader({
      success: true,
      transaction: tx,
      network: 'eip155:84532',
      payer: '0x2c7536E3605D9C16a7a3D7b1898e529396a65c23',
    });
    const decoded = decodeSettlementReceipt(theirs);
    assert.equal(decoded.txHash, tx);
    assert.equal(decoded.transaction, tx);
    assert.equal(decodeSettlementReceipt(b64({ success: true, txHash: tx, network: 'eip155:8453' })).transaction, tx);
  });

  it('accepts a v1 payment ({x402Version: 1, scheme, network, payload})', async () => {
    const v2 = await signExactPayment(requirements());
    const v1 = { x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: v2.payload };
    const decoded = decodePaymentPayload(b64(v1));
    assert.equal(decoded.x402Version, 1);
  });

  it('refuses to encode a malformed message', () => {
    assert.throws(() => encodePaymentRequired({ ...challenge(), accepts: [] }), TypeError);
    assert.throws(() => encodePaymentRequired(challenge([requirements({ amount: '1.5' })])), TypeError);
  });
});

describe('x402 codecs: facilitator replies', () => {
  it('normalises {success, txHash} and {success, transaction, network} to one shape', () => {
    const tx = `0x${'cd'.repeat(32)}`;
    assert.deepEqual(facilitatorSettleReplySchema.parse({ success: true, txHash: tx }), {
      success: true,
      transaction: tx,
      network: undefined,
      payer: undefined,
      errorReason: undefined,
      errorMessage: undefined,
      amount: undefined,
    });
    assert.equal(
      facilitatorSettleReplySchema.parse({ success: true, transaction: tx, network: 'eip155:84532', payer: '0xabc' })
        .transaction,
      tx,
    );
    assert.equal(
      facilitatorSettleReplySchema.parse({
        success: false,
        transaction: '',
        network: 'eip155:84532',
        errorReason: 'insufficient_funds',
      }).errorReason,
      'insufficient_funds',
    );
  });

  it('refuses a success without a transaction, differing spellings, and non-boolean flags', () => {
    assert.equal(facilitatorSettleReplySchema.safeParse({ success: true }).success, false);
    assert.equal(facilitatorSettleReplySchema.safeParse({ success: true, transaction: '' }).success, false);
    assert.equal(
      facilitatorSettleReplySchema.safeParse({ success: true, transaction: '0x1', txHash: '0x2' }).success,
      false,
    );
    assert.equal(facilitatorSettleReplySchema.safeParse({ success: 'true', txHash: '0x1' }).success, false);
    assert.equal(facilitatorVerifyReplySchema.safeParse({ isValid: 1 }).success, false);
    assert.equal(
      facilitatorVerifyReplySchema.parse({ isValid: false, invalidReason: 'invalid_exact_evm_signature' })
        .invalidReason,
      'invalid_exact_evm_signature',
    );
  });
});

describe('x402 codecs: hostile input', () => {
  it('refuses every base64_header of the shared table with a typed error', () => {
    for (const value of hostile.base64_header!) {
      assertDecodeError(() => decodePaymentPayload(value as string));
      assertDecodeError(() => decodePaymentRequired(value as string));
      assertDecodeError(() => decodeSettlementReceipt(value as string));
    }
  });

  it('refuses every "any" value of the table as a payment, challenge or receipt', () => {
    for (const value of hostile.any!) {
      const header = b64(value);
      if (header.length > MAX_X402_HEADER_BYTES) {
        assertDecodeError(() => decodePaymentPayload(header), 'header_too_large');
        continue;
      }
      assertDecodeError(() => decodePaymentPayload(header));
      assertDecodeError(() => decodePaymentRequired(header));
    }
  });

  it('refuses the URL-safe alphabet, missing or extra padding, whitespace and non-canonical bits', () => {
    const json = b64({ a: '>>>???' }); // contains + and /
    assert.match(json, /[+/]/);
    assertDecodeError(() => decodeBase64Json(json.replace(/\+/g, '-').replace(/\//g, '_')), 'invalid_base64');
    assertDecodeError(() => decodeBase64Json('e30'), 'invalid_base64');
    assertDecodeError(() => decodeBase64Json('e30=='), 'invalid_base64');
    assertDecodeError(() => decodeBase64Json(' e30='), 'invalid_base64');
    assertDecodeError(() => decodeBase64Json('e31='), 'invalid_base64'); // same bytes as e30= with a padding bit set
    assert.deepEqual(decodeBase64Json('e30='), {});
  });

  it('refuses a header over 16 KiB before decoding it', () => {
    assertDecodeError(() => decodeBase64Json('A'.repeat(MAX_X402_HEADER_BYTES + 4)), 'header_too_large');
  });

  it('refuses prototype keys, deep nesting, lone surrogates and invalid UTF-8', () => {
    assertDecodeError(
      () => decodeBase64Json(Buffer.from('{"__proto__":{"admin":true}}').toString('base64')),
      'unsafe_json',
    );
    assertDecodeError(() => decodeBase64Json(b64({ constructor: { prototype: { x: 1 } } })), 'unsafe_json');
    assertDecodeError(
      () => decodeBase64Json(Buffer.from('{"a":[{"b":{"__proto__":{"x":1}}}]}').toString('base64')),
      'unsafe_json',
    );
    assertDecodeError(() => parseJsonSafely('['.repeat(10_000) + ']'.repeat(10_000)), 'unsafe_json');
    assertDecodeError(() => decodeBase64Json(Buffer.from('{"label":"\\ud800"}').toString('base64')), 'unsafe_json');
    // escapes that spell a forbidden key, and a raw lone surrogate in the text, take the careful path too
    assertDecodeError(() => parseJsonSafely('{"\\u005f_proto__":{"admin":true}}'), 'unsafe_json');
    assertDecodeError(() => parseJsonSafely('{"a":{"constructo\\u0072":1}}'), 'unsafe_json');
    assertDecodeError(() => parseJsonSafely('{"label":"\ud800"}'), 'unsafe_json');
    assertDecodeError(() => parseJsonSafely('{"a":1'), 'invalid_json');
    assert.deepEqual(parseJsonSafely('{"a":[1,"x",{"b":null}],"c":"\\u00e9"}'), { a: [1, 'x', { b: null }], c: 'é' });
    assertDecodeError(() => decodeBase64Json(Buffer.from([0x7b, 0xff, 0x7d]).toString('base64')), 'invalid_utf8');
    assert.equal(({} as Record<string, unknown>).admin, undefined);
  });

  it('refuses payments whose authorization fields are malformed', async () => {
    const good = await signExactPayment(requirements());
    const auth = (good.payload as { authorization: Record<string, string> }).authorization;
    const mutate = (field: string, value: unknown) =>
      b64({ ...good, payload: { ...good.payload, authorization: { ...auth, [field]: value } } });
    for (const value of hostile.evm_address!)
      if (value !== '0x0000000000000000000000000000000000000000' && !/^0x[0-9a-fA-F]{40}$/.test(String(value)))
        assertDecodeError(() => decodePaymentPayload(mutate('to', value)), 'invalid_shape');
    for (const value of hostile.bytes32_hex!)
      assertDecodeError(() => decodePaymentPayload(mutate('nonce', value)), 'invalid_shape');
    for (const value of hostile.raw_token_amount!)
      assertDecodeError(() => decodePaymentPayload(mutate('value', value)), 'invalid_shape');
    for (const value of hostile.caip2_network!)
      assertDecodeError(
        () =>
          decodePaymentPayload(
            b64({ ...good, accepted: { ...(good as { accepted: object }).accepted, network: value } }),
          ),
        'invalid_shape',
      );
    assertDecodeError(() => decodePaymentPayload(mutate('extra', 'x')), 'invalid_shape');
  });

  it('readPaymentHeader prefers PAYMENT-SIGNATURE, falls back to X-PAYMENT, refuses two different payments', () => {
    assert.equal(
      readPaymentHeader((n) => ({ 'payment-signature': 'A', 'x-payment': 'A' })[n]),
      'A',
    );
    assert.equal(
      readPaymentHeader((n) => ({ 'x-payment': 'B' })[n]),
      'B',
    );
    assert.equal(
      readPaymentHeader(() => undefined),
      undefined,
    );
    assertDecodeError(
      () => readPaymentHeader((n) => ({ 'payment-signature': 'A', 'x-payment': 'B' })[n]),
      'invalid_shape',
    );
  });

  it('encodes standard padded base64 of UTF-8 JSON', () => {
    assert.equal(encodeBase64Json({ a: 'é' }), Buffer.from('{"a":"é"}', 'utf8').toString('base64'));
  });
});
