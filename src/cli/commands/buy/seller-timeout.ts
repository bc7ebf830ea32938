/**
 * `xx buy --timeout <seconds>`: how long the exchange with the seller may take in all — the unpaid request,
 * and the paid one with its answer read to the end (the buyer SDK's `sellerTimeoutMs`, whose `SellerTimeoutError`
 * becomes `seller_timeout`; Treasury's own calls keep their 30-s time-out). Default
 * BUY_SELLER_TIMEOUT_SECONDS; 1 to MAX_BUY_SELLER_TIMEOUT_SECONDS whole seconds.
 *
 * Defends: an `xx buy` held forever by a seller that accepts the connection and never answers (a script, an
 * agent's tool call, a CI job waiting on it). A time-out after the payment was sent loses nothing: the purchase
 * stays in the CLI's store (./buy-purchases.ts), so the same command line sends that same payment again while
 * it is valid — never a second one.
 */
import { CliError } from '../../core/cli-error.js';
import { wholeSecondsArgument } from '../seller/seller-kit.js';

/** The default bound on the seller exchange, in seconds (a paid route's settlement on a slow chain fits in it). */
export const BUY_SELLER_TIMEOUT_SECONDS = 120;

/** The longest `--timeout`, in seconds. */
export const MAX_BUY_SELLER_TIMEOUT_SECONDS = 600;

/** `--timeout`'s value in ms (the default when absent); invalid_argument unless 1..600 whole seconds. */
export function sellerTimeoutMs(raw: string | undefined): number {
  if (raw === undefined) return BUY_SELLER_TIMEOUT_SECONDS * 1000;
  return wholeSecondsArgument('--timeout', raw, 1, MAX_BUY_SELLER_TIMEOUT_SECONDS) * 1000;
}

/** `seller_timeout` (exit 1): what ran out, and that the same command resends the same payment. */
export function sellerTimeoutError(timeoutMs: number, host: string): CliError {
  return new CliError({
    code: 'seller_timeout',
    userMessage: `${host} did not answer within ${timeoutMs / 1000} s. If a payment was sent, the same xx buy sends that same payment again (never a second one) while it is valid.`,
    details: { timeout_seconds: timeoutMs / 1000 },
  });
}
