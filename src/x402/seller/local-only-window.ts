/**
 * Local-only mode's one check (./paid-request.ts, no facilitator and XX_ALLOW_LOCAL_ONLY=1): the payment's
 * validity window contains now. Pure but for the clock.
 *
 * Defends against: an expired or not-yet-valid authorization being accepted in local-only mode. Does not
 * defend against anything else: nothing is verified or settled in that mode.
 */
import type { PaymentMatch } from './payment-terms.js';

export function localOnlyProblem(
  match: Pick<Extract<PaymentMatch, { kind: 'match' }>, 'validBefore' | 'validAfter'>,
): string | undefined {
  const now = Math.floor(Date.now() / 1000);
  if (match.validBefore !== undefined && match.validBefore <= now) return 'authorization_expired';
  if (match.validAfter !== undefined && match.validAfter > now) return 'authorization_not_yet_valid';
  return undefined;
}
