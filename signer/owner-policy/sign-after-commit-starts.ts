/**
 * When a payment whose spend commits meanwhile (../signer-service.ts `signWhileCommitting`) asks the backend for its
 * signature: the store's batch starts at the end of the turn in which the spend was asked for (./spend-batcher.ts),
 * and a signature the backend makes on the signer's main thread holds that thread.
 *
 * Defends: a lone payment's latency — its commit and its signature run side by side instead of one after the other.
 * Does not defend: what is signed or when it leaves (the caller releases it only once the spend committed).
 */
import type { SignDigestOptions } from '../backends/key-backend.js';
import type { PaymentReservation } from './owner-policies.js';

/**
 * Starts the signature of a payment whose spend commits meanwhile (`signWhileCommitting`). A signature the backend
 * would make on this thread — the signer holds no other request (`context.alone`) — would hold the thread before
 * the spend's statement is sent (its batch starts at the end of this turn): it is asked for just after, so that
 * the store commits while the HSM signs. Otherwise it is asked for now, and the commit may gather other spends
 * until it is made (`waitFor`).
 */
export function signAfterCommitStarts<R>(
  reservation: PaymentReservation,
  sign: () => Promise<R>,
  context: SignDigestOptions,
): Promise<R> {
  if (context.alone?.() === true) return new Promise<void>((resolve) => setImmediate(resolve)).then(sign);
  const signing = sign();
  reservation.waitFor?.(signing);
  return signing;
}
