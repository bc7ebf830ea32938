/**
 * The errors of a purchase kept between attempts (x402-purchase.ts). Both are raised before anything new is
 * signed or sent: `PurchaseTermsChangedError` when a purchase that already signed its payment meets a seller
 * that no longer offers those terms, `PurchaseStoreError` when the purchase store cannot be read or written.
 */
import { TreasurySdkError } from './sdk-errors.js';

/**
 * The purchase already signed a payment for terms the seller no longer offers (or Treasury holds its
 * identifier for other terms: `payment_identifier_conflict`). Nothing new was signed: the earlier payment
 * may still settle until it expires. To pay the new terms, start a new purchase (another purchase key or id).
 */
export class PurchaseTermsChangedError extends TreasurySdkError {
  constructor(
    readonly paymentId: string,
    cause?: unknown,
  ) {
    super(
      'purchase_terms_changed',
      `Purchase ${paymentId} already signed a payment for other terms than the seller asks now; nothing new was signed. Start a new purchase to pay these terms.`,
      { details: { payment_id: paymentId }, cause },
    );
  }
}

/** The purchase store could not keep or read a purchase; nothing new was signed or sent. */
export class PurchaseStoreError extends TreasurySdkError {
  constructor(detail: string, cause?: unknown) {
    super('purchase_store_unavailable', `The purchase store ${detail}; nothing new was signed or sent.`, { cause });
  }
}
