/**
 * velocity_cap {max_count, window_seconds}: refused when recentCount + 1 > max_count, i.e. when this payment
 * would be one too many in the rolling window ending now (the max_count-th payment is allowed).
 *
 * Protects against: a runaway agent loop paying many times quickly, whatever the amounts.
 * Known limits: counts signed payments (allowed decisions), not denials; the caller counts them with
 * `created_at > velocityWindowStart(policy, now)`.
 */
import type { Violation } from '../policy-types.js';
import type { RuleContext } from './rule-context.js';

export function checkVelocityCap({ policy, state }: RuleContext): Violation | null {
  const cap = policy.velocityCap;
  if (!cap || state.recentCount + 1 <= cap.maxCount) return null;
  return {
    rule: 'velocity_cap',
    message: `${state.recentCount} payments in the last ${cap.windowSeconds} s; at most ${cap.maxCount} are allowed`,
    limit: String(cap.maxCount),
    window_seconds: cap.windowSeconds,
    recent_count: state.recentCount,
  };
}
