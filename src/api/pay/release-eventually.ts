/**
 * Gives back a fresh reservation whose signature never left — the signer failed, or the database failed under
 * its record or under its own write: now (the promise settles after this first attempt), and again after 1,
 * 5 and 30 s while the database does not answer. The release (./store/release-reservation.ts, under the wallet
 * lock) marks it released (freeing its Idempotency-Key for a retry), gives back the window and PAT totals it
 * counted and audits it — and this process forgets what it remembered of the wallet and the PAT's day, which
 * the release moved past; it is a no-op for a row that is not reserved (a record or write that committed
 * after all is left as it is, and one that never committed has no row). The released authorization still
 * counts as the last payment (cooling-off errs on the safe side).
 * Does not defend: pending attempts lost when the process stops — the reservation then stays counted until
 * it expires and the sweep gives it back (./expired-reservation-sweeper.ts).
 */
import { parseUsd } from '../../../policy/money.js';
import type { PayDeps } from './pay-deps.js';
import type { CallContext, Reservation } from './pay-types.js';
import { paymentTerms } from './payment-authorization.js';
import type { ReleaseReason } from './store/release-reservation.js';

const RETRY_DELAYS_MS = [1_000, 5_000, 30_000];

export function releaseEventually(
  deps: PayDeps,
  ctx: CallContext,
  reservation: Reservation,
  reason: Exclude<ReleaseReason, 'expired_unsigned'>,
): Promise<void> {
  const attempt = (n: number): Promise<void> =>
    release(deps, ctx, reservation, reason).catch(() => {
      if (n < RETRY_DELAYS_MS.length) setTimeout(() => void attempt(n + 1), RETRY_DELAYS_MS[n]).unref();
      else deps.metrics.payDecisions.inc({ kind: 'pay', outcome: 'release_failed' });
    });
  return attempt(0);
}

async function release(
  deps: PayDeps,
  ctx: CallContext,
  reservation: Reservation,
  reason: ReleaseReason,
): Promise<void> {
  const { payment, windows } = reservation;
  const released = await deps.writes.release(
    {
      walletId: ctx.walletId,
      authorizationId: payment.authorization_id,
      decisionId: payment.decision_id,
      amountMicro: parseUsd(payment.amount_usd),
      amountUsd: payment.amount_usd,
      nonce: paymentTerms(payment).nonce,
      windows,
      patTokenId: ctx.pat?.tokenId,
    },
    ctx.actor,
    reason,
    deps.clock(),
  );
  if (!released) return;
  deps.metrics.payDecisions.inc({ kind: 'pay', outcome: 'released' });
  // The release's audit row moved the wallet's chain, and what this process remembered of the PAT's day still
  // counts the released payment: both are read again.
  deps.memory.forgetWallet(ctx.walletId, ctx.pat?.tokenId);
}
