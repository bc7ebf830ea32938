/** velocity_cap {max_count, window_seconds}: refused when this payment would be one too many in the rolling window. */
import type { WalletPolicy } from '../policy-schema.js';
import type { SpendState, Violation } from '../policy-types.js';

export function checkVelocityCap(policy: WalletPolicy, state: SpendState): Violation | null {
  const cap = policy.velocity_cap;
  if (!cap || state.recentCount + 1 <= cap.max_count) return null;
  return {
    rule: 'velocity_cap',
    message: `${state.recentCount} payments in the last ${cap.window_seconds} s; at most ${cap.max_count} are allowed`,
    limit: String(cap.max_count),
    window_seconds: cap.window_seconds,
    recent_count: state.recentCount,
  };
}
