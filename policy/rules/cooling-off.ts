/** cooling_off (seconds): refused within that many seconds of the wallet's last signed payment. */
import type { WalletPolicy } from '../policy-schema.js';
import type { SpendState, Violation } from '../policy-types.js';

export function coolingOffRemainingSeconds(policy: WalletPolicy, state: SpendState, now: Date): number {
  if (!policy.cooling_off || !state.lastPaymentAt) return 0;
  const elapsedMs = now.getTime() - state.lastPaymentAt.getTime();
  const remainingMs = policy.cooling_off * 1000 - elapsedMs;
  return remainingMs > 0 ? Math.ceil(remainingMs / 1000) : 0;
}

export function checkCoolingOff(policy: WalletPolicy, state: SpendState, now: Date): Violation | null {
  const remaining = coolingOffRemainingSeconds(policy, state, now);
  if (remaining === 0) return null;
  return {
    rule: 'cooling_off',
    message: `the last payment was less than ${policy.cooling_off} s ago; wait ${remaining} s`,
    limit: String(policy.cooling_off),
    retry_after_seconds: remaining,
  };
}
