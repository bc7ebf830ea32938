/**
 * Reserving a payment alone: in the wallet's turn, after its queued writes settled, decide on the remembered
 * snapshot or on one read, and write the decision in a statement of its own (autocommit, so atomic). Taken
 * by a payment decided again after a shared statement failed (so that its own error, if any, is its
 * answer) and by a payment whose Idempotency-Key this process has seen before (its earlier attempt must be
 * looked up). Its audit row at head + 1 fails the write if anything changed the wallet since the snapshot.
 */
import { enterWalletTurn, writesSettled } from '../db/wallet-transaction.js';
import { nonceUsedError, type PaymentAttempt } from './payment-attempt.js';
import type { PayDeps } from './pay-deps.js';
import type { DecisionOutcome } from './pay-types.js';
import { markUncertain } from './uncertain-reservation.js';

export async function reserveAlone(deps: PayDeps, attempt: PaymentAttempt): Promise<DecisionOutcome> {
  const walletId = attempt.ctx.walletId;
  const turn = enterWalletTurn(walletId);
  if (turn.ready) await turn.ready;
  try {
    // This statement commits on its own: it must come after the wallet's queued group-commit writes.
    await writesSettled(walletId);
    const snapshot = attempt.checked(attempt.remembered() ?? (await attempt.read()));
    const decided = attempt.decide(snapshot);
    if (decided.write) {
      await deps.writes.writeAlone(decided.write).catch((err: unknown) => {
        throw markUncertain(nonceUsedError(err, decided.outcome), decided.outcome);
      });
    }
    if (decided.change) attempt.remember(snapshot, decided.change);
    return decided.outcome;
  } finally {
    turn.leave();
  }
}
