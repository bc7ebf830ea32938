/**
 * cooling_off (seconds): refused while now − lastPaymentAt < cooling_off; allowed from exactly cooling_off
 * seconds after the last signed payment. 0 (or absent) means off.
 *
 * Protects against: bursts — a minimum spacing between payments of one wallet.
 * Known limits: millisecond arithmetic, reported as whole seconds rounded up (`retry_after_seconds`). A
 * `lastPaymentAt` in the future (clocks of two API processes apart) fails closed: the wait grows by the skew.
 */
import type { ParsedPolicy, SpendState, Violation } from '../policy-types.js';
import type { RuleContext } from './rule-context.js';

/** Whole seconds (rounded up) until the cooling-off has passed; 0 when a payment may be signed now. */
export function coolingOffRemainingSeconds(policy: ParsedPolicy, state: SpendState, now: Date): number {
  const seconds = policy.coolingOffSeconds;
  if (!seconds || !state.lastPaymentAt) return 0;
  const remainingMs = seconds * 1000 - (now.getTime() - state.lastPaymentAt.getTime());
  return remainingMs > 0 ? Math.ceil(remainingMs / 1000) : 0;
}

export function checkCoolingOff({ policy, state, now }: RuleContext): Violation | null {
  const remaining = coolingOffRemainingSeconds(policy, state, now);
  if (remaining === 0) return null;
  return {
    rule: 'cooling_off',
    message: `the last payment was less than ${policy.coolingOffSeconds} s ago; wait ${remaining} s`,
    limit: String(policy.coolingOffSeconds),
    retry_after_seconds: remaining,
  };
}
