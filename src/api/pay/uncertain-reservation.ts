/**
 * A fresh reservation whose write was interrupted when the connection dropped: the write may have committed
 * although its answer was lost. `markUncertain` marks the error with it, and ./reserve-payment.ts releases
 * it (a row that was never written is simply not found). A statement PostgreSQL refused wrote nothing: left
 * unmarked.
 */
import { connectionUsableAfter } from '../db/connection-usable-after.js';
import type { DecisionOutcome, Reservation } from './pay-types.js';
import { ReservationBatchAborted } from './store/reservation-writer.js';

export function markUncertain(err: unknown, outcome: DecisionOutcome | undefined): unknown {
  const cause = err instanceof ReservationBatchAborted ? err.cause : err;
  if (
    outcome?.kind === 'reserved' &&
    outcome.fresh &&
    !connectionUsableAfter(cause) &&
    err !== null &&
    typeof err === 'object'
  ) {
    (err as { uncertainReservation?: Reservation }).uncertainReservation = outcome;
  }
  return err;
}

/** The reservation `markUncertain` marked `err` with, if any. */
export function uncertainReservation(err: unknown): Reservation | undefined {
  return (err as { uncertainReservation?: Reservation } | null)?.uncertainReservation;
}
