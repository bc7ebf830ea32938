/**
 * The x402 v2 payment payload of a Solana `exact` payment, as the official `@x402/svm` client sends it:
 * `{ x402Version: 2, resource?, accepted: <the accepts entry>, payload: { transaction } }`, base64 JSON (the
 * codec of src/x402). Checked with its own schema before it is encoded.
 *
 * Defends against: a malformed payload leaving the buyer (the entry must be a Solana one, the transaction bounded
 * base64). Does not defend against: a transaction for other terms — x402-signed-payment.ts compares it first.
 */
import { z } from 'zod';
import { encodeBase64Json } from '../x402/base64-json.js';
import { paymentRequirementsSchema, resourceInfoSchema } from '../x402/wire-schemas.js';
import type { PaymentRequired, PaymentRequirements } from '../x402/wire-schemas.js';
import type { SvmSignedTerms } from './signed-terms.js';
import { solanaTransactionSchema } from './solana-pay-reply.js';

export const svmPaymentPayloadSchema = z
  .object({
    x402Version: z.literal(2),
    resource: resourceInfoSchema.optional(),
    accepted: paymentRequirementsSchema.refine((a) => a.network.startsWith('solana:'), 'expected a solana network'),
    payload: z.object({ transaction: solanaTransactionSchema }).strict(),
    /** The extensions the buyer echoes (the purchase's `payment-identifier`). */
    extensions: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type SvmPaymentPayload = z.infer<typeof svmPaymentPayloadSchema>;

/** The payment header's value for `terms` (already compared with `requirements`), with `extensions` when any. */
export function encodeSvmPaymentPayload(
  challenge: PaymentRequired,
  requirements: PaymentRequirements,
  terms: SvmSignedTerms,
  extensions?: Record<string, unknown>,
): string {
  const payload = svmPaymentPayloadSchema.parse({
    x402Version: 2,
    resource: challenge.resource,
    accepted: requirements,
    payload: { transaction: terms.transaction },
    ...(extensions ? { extensions } : {}),
  });
  return encodeBase64Json(payload);
}
