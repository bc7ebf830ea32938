/**
 * The buyer's bound on one exchange with a seller (`createX402Buyer`'s `sellerTimeoutMs`, default
 * DEFAULT_SELLER_TIMEOUT_MS): from the unpaid request to the last byte of the answer that ends the exchange, the
 * signing step included in the wall time; what follows the seller's last answer (an `upto` settlement report, the
 * balance read after a refusal) is Treasury's and keeps TreasuryClient's `timeoutMs`, as the signing call does.
 * Past it the seller's requests are aborted and the exchange fails with `SellerTimeoutError`; the caller's own
 * `signal` still works beside it (its abort is the caller's error, as thrown).
 *
 * Defends against: a seller — or anything between it and the buyer — that accepts the connection and never
 * answers, or answers a byte at a time, holding an agent's call, a script or a CI job for ever, also through a
 * caller's `fetch` that ignores its signal (the deadline ends the wait; the exchange left behind neither signs
 * nor sends a payment once it passed); a long-lived caller signal collecting one listener per request (removed
 * when the exchange ends; no `AbortSignal.any`).
 * Does not defend against: a seller that settles and never answers — the payment stands; the purchase stays in the
 * buyer's store (`payment_sent: true`), so the same purchase key sends that same payment again, never a second.
 */
import { z } from 'zod';
import { TreasurySdkError } from './sdk-errors.js';

/** The default bound on one exchange with a seller: 2 minutes (a paid route's settlement on a slow chain fits). */
export const DEFAULT_SELLER_TIMEOUT_MS = 120_000;
/** The longest bound the buyer takes: 10 minutes. */
export const MAX_SELLER_TIMEOUT_MS = 600_000;

/** `sellerTimeoutMs`: whole milliseconds, 1 to MAX_SELLER_TIMEOUT_MS. */
export const sellerTimeoutSchema = z.number().int().min(1).max(MAX_SELLER_TIMEOUT_MS);

/**
 * The seller did not finish its answer within `timeout_ms` (createX402Buyer's `sellerTimeoutMs`); its requests
 * were aborted. `payment_sent`: whether the paid request had been sent — then the seller may have settled, and
 * the purchase stays in the buyer's store, so the same purchase key sends that same payment again.
 */
export class SellerTimeoutError extends TreasurySdkError {
  constructor(
    readonly timeout_ms: number,
    readonly payment_sent: boolean,
    cause: unknown,
  ) {
    super(
      'seller_timeout',
      `The seller did not answer within ${timeout_ms} ms. ${
        payment_sent
          ? 'A payment was sent: the same purchase key sends that same payment again, never a second.'
          : 'No payment was sent.'
      }`,
      { cause, details: { timeout_ms, payment_sent } },
    );
  }
}

/** What the exchange tells its deadline: whether the paid request has gone out, and when the seller's last answer was read. */
export interface ExchangeProgress {
  paymentSent: boolean;
  /** The seller's part is over (its last answer read): what follows is Treasury's (a settlement report, a balance read). */
  answered(): void;
}

/** The reason the deadline aborts with: a `TimeoutError`, as `AbortSignal.timeout` gives (fetch rethrows it). */
function timeoutReason(timeoutMs: number): DOMException {
  return new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError');
}

/**
 * Runs `exchange` with a signal that aborts after `timeoutMs`, or when `callerSignal` does; an abort of the
 * deadline's own becomes `SellerTimeoutError`. The timer and the listener on the caller's signal end with it.
 */
export async function withSellerDeadline<T>(
  timeoutMs: number,
  callerSignal: AbortSignal | undefined,
  exchange: (signal: AbortSignal, progress: ExchangeProgress) => Promise<T>,
): Promise<T> {
  callerSignal?.throwIfAborted();
  const controller = new AbortController();
  const reason = timeoutReason(timeoutMs);
  const timer = setTimeout(() => controller.abort(reason), timeoutMs);
  timer.unref();
  const progress: ExchangeProgress = { paymentSent: false, answered: () => clearTimeout(timer) };
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  // A fetch that ignores its signal cannot hold the caller past the deadline either: the abort ends the wait, and
  // the exchange left behind checks the signal before it signs and before it sends a payment. Listening before the
  // exchange starts, this rejection is the first an abort makes: past the deadline the race ends with `reason`.
  const aborted = new Promise<never>((_, reject) =>
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }),
  );
  try {
    return await Promise.race([exchange(controller.signal, progress), aborted]);
  } catch (err) {
    if (err === reason) throw new SellerTimeoutError(timeoutMs, progress.paymentSent, err);
    throw err;
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', onCallerAbort);
  }
}
