/**
 * The x402 `payment-identifier` of a pay request (`payment_identifier` in the body: the buyer's id of one
 * logical purchase, 16 to 128 of `[A-Za-z0-9_-]`, the extension's own rule) is the wallet's Idempotency-Key of
 * that payment. One rule, here: a pay request's idempotency key is its payment identifier when it carries one
 * (an Idempotency-Key header beside it must be the same value, else 400 `payment_identifier_mismatch`), else
 * its Idempotency-Key header. The existing idempotency store then does the rest (../pay/decide-payment.ts): the
 * same identifier with the same body answers the authorization it recorded (never a second signature), the
 * same identifier with another body is 409 — answered here as `payment_identifier_conflict`.
 *
 * Why the identifier keys the existing store instead of a store of its own: the Idempotency-Key already
 * guarantees "one signature per key per wallet" under every race and crash the pay path knows (a UNIQUE
 * (wallet_id, idempotency_key), a resumed reservation signs the message it reserved), so a second store would
 * only add a second place to get it wrong. Why it is scoped by wallet and not also by bearer: the identifier
 * names a purchase, not a caller; two tokens of one wallet sending the same purchase must not sign it twice
 * (the seller dedupes by the same identifier), and both may pay from that wallet anyway.
 *
 * Defends against: one purchase signed twice from one wallet (a retried request, a crashed buyer, two tokens);
 * one identifier reused for other terms. Does not defend against: the same purchase paid from two wallets, or
 * a buyer that makes a new identifier for each retry (nothing ties those together).
 */
import { z } from 'zod';
import { ERROR_CODES } from '../../shared/error-codes.js';
import { AppError } from '../errors/app-error.js';

/** The extension's identifier: 16 to 128 characters of `[A-Za-z0-9_-]` (a subset of the Idempotency-Key's). */
export const paymentIdentifierSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{16,128}$/, 'expected 16 to 128 characters of A-Z a-z 0-9 _ -');

/** The idempotency key of a pay request: its payment identifier, or (without one) its Idempotency-Key header. */
export function payIdempotencyKey(
  header: string | undefined,
  paymentIdentifier: string | undefined,
): string | undefined {
  if (paymentIdentifier === undefined) return header;
  if (header !== undefined && header !== paymentIdentifier) throw new AppError('payment_identifier_mismatch');
  return paymentIdentifier;
}

/** An idempotency conflict of a request keyed by its payment identifier, named as such (409). */
export function asPaymentIdentifierConflict(err: unknown, paymentIdentifier: string | undefined): unknown {
  if (paymentIdentifier === undefined || !(err instanceof AppError) || err.code !== 'idempotency_key_conflict')
    return err;
  // A conflict with its own reason (the wallet rotated since) keeps it; the plain one reads as the identifier's.
  const own = err.message !== ERROR_CODES.idempotency_key_conflict.message ? { message: err.message } : {};
  return new AppError('payment_identifier_conflict', {
    ...own,
    fields: { payment_identifier: paymentIdentifier },
    cause: err,
  });
}
