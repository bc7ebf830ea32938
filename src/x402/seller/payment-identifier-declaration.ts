/**
 * The `payment-identifier` entry of a 402 challenge's `extensions` (x402 extension, `@x402/extensions`):
 * `{ "payment-identifier": { info: { required }, schema } }`, built by the official helper so the official
 * client recognises it and echoes it with the buyer's id. The challenge builder (./paywall-answers.ts) spreads
 * it into `extensions`.
 *
 * Defends against: a buyer never learning that retries with an id are answered from the stored answer, or
 * that the seller requires an id. Does not defend against anything by itself: the rule that reads the id is
 * ./payment-identifier-rule.ts.
 */
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';

/** The extensions record entry declaring `payment-identifier`, `required` as the seller configured it. */
export function paymentIdentifierExtension(required: boolean): Record<string, unknown> {
  return { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(required) };
}
