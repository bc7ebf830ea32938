/**
 * Reserving a payment in the group commit — the usual way: in the wallet's turn, decide on the snapshot this
 * process remembers (which may count the wallet's writes still on their way) or, failing that, on one read
 * taken after those writes settled (of its velocity window alone when that is all the memory lacks); remember what this write will leave; take its place in the writer's
 * queue; and end the turn, so the wallet's next payment decides while this write is still on its way. A
 * denial fills its place at once and waits for its commit. A fresh reservation is signed while its place is
 * kept (the wallet's later writes wait behind it, other wallets' do not) and written already signed:
 * authorization, spend and audit row in one statement, committed before the signature leaves. If the
 * signer fails, the place is filled with the reservation unsigned — the wallet's later decisions were taken
 * on top of its audit row — and it is released. A write that fails is refused with ReservationBatchAborted
 * (./reserve-payment.ts decides it again); its signature never leaves.
 */
import { enterWalletTurn, trackWrite, writesSettled } from '../db/wallet-transaction.js';
import type { PayDeps } from './pay-deps.js';
import type { CallContext, DecisionOutcome, Reservation, SpendPlan } from './pay-types.js';
import type { PaymentAttempt } from './payment-attempt.js';
import type { PaymentAuthorization } from './payment-authorization.js';
import { releaseEventually } from './release-eventually.js';
import { signReservation } from './sign-payment.js';
import { signedWrite, type DecisionWrite } from './store/decision-write.js';
import type { WritePlace } from './store/reservation-writer.js';
import { markUncertain } from './uncertain-reservation.js';

/** A payment signed in its place and written with its signature. */
export interface SignedInPlace {
  kind: 'signed';
  payment: PaymentAuthorization;
}

/**
 * The outcome, `signed` for a fresh reservation signed in place; or `no_room` when the capped PAT's
 * remembered total no longer leaves room for it (payments of the same PAT decided while this one waited
 * took it): the caller decides it under the PAT's lock. `decidedHook` runs once a reservation is decided,
 * before the signer is asked.
 */
export async function reserveInGroupCommit(
  deps: PayDeps,
  attempt: PaymentAttempt,
  decidedHook: () => void,
): Promise<DecisionOutcome | SignedInPlace | { kind: 'no_room' }> {
  const decided = await decideInTurn(deps, attempt);
  if (!decided) return { kind: 'no_room' };
  const { outcome, write, place } = decided;
  if (!write || !place) return outcome;
  if (outcome.kind === 'reserved') {
    decidedHook();
    return signInPlace(deps, attempt.ctx, attempt.plan, outcome, write, place);
  }
  place.fill(write);
  await place.committed;
  return outcome;
}

/** In the wallet's turn: the snapshot, the decision, what it leaves remembered, and its place in the queue (none for a replay or a resumed reservation). */
async function decideInTurn(
  deps: PayDeps,
  attempt: PaymentAttempt,
): Promise<{ outcome: DecisionOutcome; write?: DecisionWrite; place?: WritePlace } | undefined> {
  const { ctx, cappedPat } = attempt;
  const turn = enterWalletTurn(ctx.walletId);
  if (turn.ready) await turn.ready;
  try {
    let remembered = attempt.remembered();
    if (!remembered) {
      await writesSettled(ctx.walletId);
      remembered = attempt.remembered() ?? (await attempt.readOn());
    }
    const snapshot = attempt.checked(remembered ?? (await attempt.read()));
    // Payments of the same PAT decided while this one waited may have taken its room.
    if (cappedPat && !attempt.patRoom(cappedPat)) return undefined;
    if (cappedPat) deps.metrics.patCapChecks.inc({ source: 'remembered' });
    const decided = attempt.decide(snapshot);
    if (!decided.write) return { outcome: decided.outcome };
    // The wallet's next payment decides on this write's outcome while it is on its way.
    attempt.remember(snapshot, decided.change!);
    if (cappedPat && decided.outcome.kind === 'reserved')
      deps.memory.countPatPayment(cappedPat.tokenId, attempt.plan.amountMicro);
    const place = deps.writes.place(decided.write.lockKey);
    trackWrite(ctx.walletId, place.committed);
    return { outcome: decided.outcome, write: decided.write, place };
  } finally {
    turn.leave();
  }
}

async function signInPlace(
  deps: PayDeps,
  ctx: CallContext,
  plan: SpendPlan,
  reservation: Reservation,
  write: DecisionWrite,
  place: WritePlace,
): Promise<SignedInPlace> {
  const written = () =>
    place.committed.catch((err: unknown) => {
      throw markUncertain(err, reservation);
    });
  let signed: Awaited<ReturnType<typeof signReservation>>;
  try {
    signed = await signReservation(deps.signer, reservation);
  } catch (err) {
    place.fill(write);
    await written();
    await releaseEventually(deps, ctx, reservation, 'signer_failed');
    throw err;
  }
  deps.faults.afterSign?.();
  const { signature, payment } = signed;
  const at = deps.clock();
  const stopRecord = deps.metrics.dbTransactionDuration.startTimer({ operation: `${plan.kind}_record` });
  place.fill(signedWrite(write, payment, signature, at));
  await written().finally(() => stopRecord());
  return { kind: 'signed', payment };
}
