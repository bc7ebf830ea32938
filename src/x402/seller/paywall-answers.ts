/**
 * The answers the paywall (paid-request.ts) writes itself, never the paid work's: the 402 challenge (the
 * route's terms on `PAYMENT-REQUIRED` and `X-PAYMENT-REQUIRED`, the same JSON as the body), the JSON error
 * answers of its own codes, and the receipt headers (`PAYMENT-RESPONSE` + `X-PAYMENT-RESPONSE`) of a settled,
 * failed or local-only payment. Every answer it writes says `Cache-Control: no-store`.
 *
 * Defends against: a challenge or a receipt cached by a shared cache (no-store); a facilitator's or a
 * decoder's text growing an answer without bound (reasons and details are clipped). Does not defend against:
 * the paid work's own headers (the adapter keeps or drops them, paid-request.ts says when).
 */
import { ERROR_CODES } from '../../shared/error-codes.js';
import { encodePaymentRequired, encodeSettlementReceipt, X402_HEADERS } from '../header-codec.js';
import type { PaymentRequired, SettlementReceiptInput } from '../wire-schemas.js';
import type { RouteTerms } from './payment-terms.js';
import { paymentIdentifierExtension } from './payment-identifier-declaration.js';

/** The codes the paywall answers with, from the project's one error list. */
export const X402_MIDDLEWARE_ERRORS = {
  invalid_payment_header: ERROR_CODES.invalid_payment_header,
  seller_misconfigured: ERROR_CODES.seller_misconfigured,
  facilitator_not_configured: ERROR_CODES.facilitator_not_configured,
  settlement_override_invalid: ERROR_CODES.settlement_override_invalid,
  payment_identifier_invalid: ERROR_CODES.payment_identifier_invalid,
  payment_identifier_required: ERROR_CODES.payment_identifier_required,
  payment_identifier_conflict: ERROR_CODES.payment_identifier_conflict,
  payment_identifier_in_flight: ERROR_CODES.payment_identifier_in_flight,
  payment_identifier_not_replayable: ERROR_CODES.payment_identifier_not_replayable,
  payment_identifier_unavailable: ERROR_CODES.payment_identifier_unavailable,
} as const;

/** A response answer the paywall writes itself (challenges and errors): status, headers, a JSON body. */
export interface PaywallAnswer {
  status: number;
  headers: Record<string, string>;
  /** The JSON body; undefined: none (the 204 answering a preflight, ./cors-preflight.ts). */
  body: unknown;
}

/** `s`, cut to at most `max` characters. */
export const clip = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);

export function errorAnswer(
  code: keyof typeof X402_MIDDLEWARE_ERRORS,
  fields: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): PaywallAnswer {
  const { status, message } = X402_MIDDLEWARE_ERRORS[code];
  return {
    status,
    headers: { 'Cache-Control': 'no-store', ...headers },
    body: { error_code: code, user_message: message, ...fields },
  };
}

/** The receipt, on both headers. */
export function receiptHeaders(receipt: SettlementReceiptInput): Record<string, string> {
  const header = encodeSettlementReceipt(receipt);
  return { [X402_HEADERS.paymentResponse]: header, [X402_HEADERS.paymentResponseLegacy]: header };
}

/** The 402 challenge with the route's terms and `error`; `receipt` (a failed settlement's) rides along. */
export function challengeAnswer(terms: RouteTerms, error: string, receipt?: SettlementReceiptInput): PaywallAnswer {
  const challenge: PaymentRequired = {
    x402Version: 2,
    error: clip(error, 512),
    resource: terms.resource,
    accepts: terms.accepts,
    extensions: {
      ...terms.extensions,
      ...paymentIdentifierExtension(terms.paymentIdentifierRequired ?? false),
    },
  };
  const header = encodePaymentRequired(challenge);
  return {
    status: 402,
    headers: {
      [X402_HEADERS.paymentRequired]: header,
      [X402_HEADERS.paymentRequiredLegacy]: header,
      'Cache-Control': 'no-store',
      ...(receipt ? receiptHeaders(receipt) : {}),
    },
    body: challenge,
  };
}
