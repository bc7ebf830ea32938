/**
 * Check and reserve, taken again until it holds: each attempt (./payment-attempt.ts) takes one of three
 * ways, and a write that failed because the wallet changed meanwhile is decided again on a fresh snapshot.
 * - A buyer PAT with a daily cap whose remembered total leaves no room (or is not known, or the payment is
 *   decided alone), or a buyer PAT whose cap an earlier attempt's statement met (23514; a cap lowered or set
 *   since its bearer was cached, here or in another process): ./reserve-under-pat-lock.ts, on the cap read
 *   there, so the refusal is the cap's (429 MGMT_6014), whatever cap the bearer was cached with.
 * - Decided again after a shared statement failed, or under an Idempotency-Key this process has seen:
 *   ./reserve-alone.ts (one read, one statement of its own).
 * - Otherwise: ./reserve-in-group-commit.ts — decided on the remembered snapshot, written in a shared
 *   statement, a fresh reservation signed before it is written (`signed`).
 *
 * Retried (at most 20 times; `treasury_pay_conflict_retries_total`): a write refused with
 * ReservationBatchAborted (nothing of it was written: decided again, alone, so its own error, if any, is
 * its answer); an audit row or Idempotency-Key another process wrote first (23505 on the chain's or the
 * key's UNIQUE); a PAT's total carried past its cap by another process's payments or by a cap lowered
 * since (23514). Not retried: a row whose own values PostgreSQL cannot hold (400 `unstorable_value`; the
 * payments that shared its statement were written without it). Whatever failed, this process forgets the
 * wallet's snapshot and the PAT's total; a fresh reservation whose write may have committed although its
 * answer was lost is released.
 */
import { AppError } from '../errors/app-error.js';
import type { PayDeps } from './pay-deps.js';
import type { CallContext, DecisionOutcome, SpendPlan } from './pay-types.js';
import { PaymentAttempt } from './payment-attempt.js';
import { releaseEventually } from './release-eventually.js';
import { reserveAlone } from './reserve-alone.js';
import { reserveInGroupCommit, type SignedInPlace } from './reserve-in-group-commit.js';
import { reserveUnderPatLock } from './reserve-under-pat-lock.js';
import { isDataException } from './store/is-row-error.js';
import { ReservationBatchAborted } from './store/reservation-writer.js';
import { uncertainReservation } from './uncertain-reservation.js';

/** Optimistic reservations retried after a concurrent change of the same wallet (other processes only). */
const MAX_RESERVE_ATTEMPTS = 20;

/** `decidedHook` runs once a reservation in the group commit is decided, before the signer is asked. */
export async function reservePayment(
  deps: PayDeps,
  ctx: CallContext,
  plan: SpendPlan,
  requestHash: string | null,
  decidedHook: () => void,
): Promise<DecisionOutcome | SignedInPlace> {
  let alone = false;
  let capMet = false;
  for (let attempt = 1; ; attempt++) {
    try {
      return await reserveOnce(deps, new PaymentAttempt(deps, ctx, plan, requestHash), { alone, capMet }, decidedHook);
    } catch (err) {
      deps.memory.forgetSnapshot(ctx.walletId);
      if (ctx.pat) deps.memory.forgetPatTotal(ctx.pat.tokenId);
      if (metPatCap(err instanceof ReservationBatchAborted ? err.cause : err)) capMet = true;
      // Its write may have committed although the connection dropped before the answer: nobody will sign
      // it (a retry decides anew), so it is given back once the database answers — or found not written.
      const uncertain = uncertainReservation(err);
      if (uncertain) void releaseEventually(deps, ctx, uncertain, 'write_unacknowledged');
      // PostgreSQL refused a value of this payment's own row (the route schemas should have): it would fail
      // again, so it is not taken again; the payments that shared its statement were written without it.
      const ownRow = err instanceof ReservationBatchAborted ? (err.rowRefused ? err.cause : undefined) : err;
      if (isDataException(ownRow))
        throw new AppError('unstorable_value', { fields: { sqlstate: (ownRow as { code: string }).code } });
      if (err instanceof ReservationBatchAborted) {
        // Nothing of this payment was written: take it again, alone, so that its own error (if any) is its answer.
        alone = true;
        if (attempt >= MAX_RESERVE_ATTEMPTS) throw err.cause;
        deps.metrics.payConflicts.inc({ kind: plan.kind });
        continue;
      }
      if (!isStaleSnapshot(err) || attempt >= MAX_RESERVE_ATTEMPTS) throw err;
      deps.metrics.payConflicts.inc({ kind: plan.kind });
    }
  }
}

/**
 * One attempt, by the way that fits it (see the header). `alone`: an earlier attempt's shared statement
 * failed; `capMet`: an earlier attempt's statement met the PAT's cap.
 */
async function reserveOnce(
  deps: PayDeps,
  attempt: PaymentAttempt,
  { alone, capMet }: { alone: boolean; capMet: boolean },
  decidedHook: () => void,
): Promise<DecisionOutcome | SignedInPlace> {
  const { ctx, cappedPat, cacheable } = attempt;
  if (ctx.pat && (capMet || (cappedPat && (alone || !cacheable || !attempt.patRoom(cappedPat)))))
    return reserveUnderPatLock(deps, attempt, ctx.pat.tokenId);
  if (alone || !cacheable) return reserveAlone(deps, attempt);
  const outcome = await reserveInGroupCommit(deps, attempt, decidedHook);
  return outcome.kind === 'no_room' ? reserveUnderPatLock(deps, attempt, cappedPat!.tokenId) : outcome;
}

/**
 * A write that failed because the snapshot it was decided on went stale: another process appended to the
 * wallet's audit chain or used the Idempotency-Key first (23505), or the PAT's total went past its cap
 * (23514: see metPatCap).
 */
function isStaleSnapshot(err: unknown): boolean {
  const pgErr = err as { code?: string; constraint?: string } | null;
  return (
    (pgErr?.code === '23505' &&
      (pgErr.constraint === 'audit_events_chain_key_seq_unique' ||
        pgErr.constraint === 'authorizations_wallet_id_idempotency_key_unique')) ||
    metPatCap(err)
  );
}

/**
 * A buyer PAT's day counted past its cap as committed when the statement ran (CHECK
 * pat_spend_totals_within_cap): another process counted payments this one did not see, or the cap was
 * lowered or set since this payment's bearer was cached or its PAT's total remembered.
 */
function metPatCap(err: unknown): boolean {
  const pgErr = err as { code?: string; constraint?: string } | null;
  return pgErr?.code === '23514' && pgErr.constraint === 'pat_spend_totals_within_cap';
}
