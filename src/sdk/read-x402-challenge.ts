/**
 * `readX402Challenge`: the payment challenge of a 402 and the dialect to answer it in, through the codecs of
 * src/x402 (header-codec.ts, wire-schemas.ts): the official v2 `PAYMENT-REQUIRED` header (answer on
 * `PAYMENT-SIGNATURE`), else the spec's `X-PAYMENT-REQUIRED` header (answer on `X-PAYMENT`), else a JSON
 * body holding a v2 challenge (answer on `PAYMENT-SIGNATURE`). A legacy x402 v1 body (plain network names,
 * `maxAmountRequired`) is refused with a clear message: Treasury signs CAIP-2 `exact` entries only.
 *
 * Defends against: what the codecs refuse (oversized or malformed base64/JSON, bad amounts and addresses).
 * Does not defend against: a well-formed challenge with a price or payee the caller would not want (the
 * budget check and the wallet's policy are the controls).
 */
import { decodePaymentRequired, X402_HEADERS } from '../x402/header-codec.js';
import { paymentRequiredSchema, type PaymentRequired } from '../x402/wire-schemas.js';
import { jsonOrUndefined } from './json-or-undefined.js';
import { InvalidChallengeError } from './sdk-errors.js';

export type X402Dialect = 'v2' | 'spec';

export interface X402Challenge {
  challenge: PaymentRequired;
  /** `v2` → pay on `PAYMENT-SIGNATURE`; `spec` → pay on `X-PAYMENT`. */
  dialect: X402Dialect;
}

/** Decodes a challenge header; undefined when absent or unreadable (used for the seller's reason on a second 402). */
export function tryDecodeChallengeHeader(value: string | null): PaymentRequired | undefined {
  if (!value) return undefined;
  try {
    return decodePaymentRequired(value);
  } catch {
    return undefined;
  }
}

export function readX402Challenge(headers: Headers, bodyText: string): X402Challenge {
  const v2 = headers.get(X402_HEADERS.paymentRequired);
  const spec = headers.get(X402_HEADERS.paymentRequiredLegacy);
  const header = v2 ?? spec;
  if (header !== null) {
    try {
      return { challenge: decodePaymentRequired(header), dialect: v2 !== null ? 'v2' : 'spec' };
    } catch (err) {
      throw new InvalidChallengeError(
        `The ${v2 !== null ? X402_HEADERS.paymentRequired : X402_HEADERS.paymentRequiredLegacy} header could not be read: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  const json = jsonOrUndefined(bodyText);
  if (json === undefined) {
    throw new InvalidChallengeError(
      'The seller answered 402 without an x402 challenge (no PAYMENT-REQUIRED or X-PAYMENT-REQUIRED header, body not JSON).',
    );
  }
  if (json && typeof json === 'object' && (json as { x402Version?: unknown }).x402Version === 1) {
    throw new InvalidChallengeError(
      'The seller speaks x402 v1 (legacy body challenge); this buyer pays x402 v2 challenges (CAIP-2 networks) only.',
    );
  }
  const parsed = paymentRequiredSchema.safeParse(json);
  if (!parsed.success) throw new InvalidChallengeError('The 402 body is not an x402 v2 challenge.');
  return { challenge: parsed.data, dialect: 'v2' };
}
