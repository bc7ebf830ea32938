/**
 * x402 header codecs: challenge, payment and receipt, each validated by its schema on the way in and on the
 * way out (we never emit a header our own decoder would refuse). Both dialects' header names are spoken
 * (docs/adr/0004-x402-wire-and-koa-middleware.md): challenges on `PAYMENT-REQUIRED` and `X-PAYMENT-REQUIRED`,
 * payments read from `PAYMENT-SIGNATURE` or `X-PAYMENT`, receipts on `PAYMENT-RESPONSE` and `X-PAYMENT-RESPONSE`.
 *
 * Defends against: everything base64-json.ts and wire-schemas.ts refuse; two different payments in one request
 * (both payment headers present with different values is refused, not resolved by preference).
 * Does not defend against: a well-formed payment for the wrong terms (the middleware compares) or a forged
 * signature (the facilitator verifies).
 */
import type { z } from 'zod';
import { decodeBase64Json, encodeBase64Json, MAX_X402_HEADER_BYTES } from './base64-json.js';
import {
  paymentPayloadSchema,
  paymentRequiredSchema,
  settlementReceiptSchema,
  type PaymentPayload,
  type PaymentRequired,
  type SettlementReceipt,
  type SettlementReceiptInput,
} from './wire-schemas.js';
import { X402DecodeError } from './x402-decode-error.js';

export const X402_HEADERS = {
  paymentRequired: 'PAYMENT-REQUIRED',
  paymentRequiredLegacy: 'X-PAYMENT-REQUIRED',
  paymentSignature: 'PAYMENT-SIGNATURE',
  paymentLegacy: 'X-PAYMENT',
  paymentResponse: 'PAYMENT-RESPONSE',
  paymentResponseLegacy: 'X-PAYMENT-RESPONSE',
} as const;

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}

function decodeWith<S extends z.ZodType>(schema: S, value: string, what: string, maxBytes: number): z.output<S> {
  const json = decodeBase64Json(value, maxBytes);
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new X402DecodeError('invalid_shape', `${what} has the wrong shape: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

function encodeWith<S extends z.ZodType>(schema: S, value: z.input<S>, what: string): string {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new TypeError(`refusing to encode a malformed ${what}: ${describeIssues(parsed.error)}`);
  return encodeBase64Json(value);
}

export function encodePaymentRequired(value: PaymentRequired): string {
  return encodeWith(paymentRequiredSchema, value, 'payment challenge');
}

export function decodePaymentRequired(header: string, maxBytes = MAX_X402_HEADER_BYTES): PaymentRequired {
  return decodeWith(paymentRequiredSchema, header, 'the payment challenge', maxBytes);
}

export function encodePaymentPayload(value: PaymentPayload): string {
  return encodeWith(paymentPayloadSchema, value, 'payment payload');
}

export function decodePaymentPayload(header: string, maxBytes = MAX_X402_HEADER_BYTES): PaymentPayload {
  return decodeWith(paymentPayloadSchema, header, 'the payment', maxBytes);
}

/** Encodes a receipt; `txHash` defaults to `transaction` so both spellings are always present. */
export function encodeSettlementReceipt(value: SettlementReceiptInput): string {
  // Assigned, not `{ ...value, transaction, txHash }`: a literal that starts with a spread is slow on Node 20.
  const full = Object.assign({}, value, {
    transaction: value.transaction ?? value.txHash,
    txHash: value.txHash ?? value.transaction,
  });
  return encodeWith(settlementReceiptSchema, full, 'settlement receipt');
}

export function decodeSettlementReceipt(header: string, maxBytes = MAX_X402_HEADER_BYTES): SettlementReceipt {
  return decodeWith(settlementReceiptSchema, header, 'the settlement receipt', maxBytes);
}

/**
 * The payment header of a request, read through `getHeader` (case-insensitive, as Node and fetch give them):
 * `PAYMENT-SIGNATURE`, else `X-PAYMENT`. Returns undefined when neither is present; throws
 * `X402DecodeError('invalid_shape')` when both are present with different values.
 */
export function readPaymentHeader(
  getHeader: (name: string) => string | string[] | null | undefined,
): string | undefined {
  const one = (name: string): string | undefined => {
    const v = getHeader(name);
    if (v === null || v === undefined) return undefined;
    if (Array.isArray(v)) {
      if (v.length > 1) throw new X402DecodeError('invalid_shape', `${name} appears more than once`);
      return v[0];
    }
    return v;
  };
  const primary = one(X402_HEADERS.paymentSignature.toLowerCase());
  const legacy = one(X402_HEADERS.paymentLegacy.toLowerCase());
  if (primary !== undefined && legacy !== undefined && primary !== legacy) {
    throw new X402DecodeError('invalid_shape', 'PAYMENT-SIGNATURE and X-PAYMENT carry different payments');
  }
  return primary ?? legacy;
}
