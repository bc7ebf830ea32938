/** daily_cap_usd, weekly_cap_usd, monthly_cap_usd: refused when the window's total would exceed the cap. */
import { formatUsd, parseUsd } from '../money.js';
import type { WalletPolicy } from '../policy-schema.js';
import type { RuleName, SpendRequest, SpendState, Violation } from '../policy-types.js';

export const WINDOW_RULES = [
  { rule: 'daily_cap_usd', window: 'daily', spent: (s: SpendState) => s.dailySpentMicro },
  { rule: 'weekly_cap_usd', window: 'weekly', spent: (s: SpendState) => s.weeklySpentMicro },
  { rule: 'monthly_cap_usd', window: 'monthly', spent: (s: SpendState) => s.monthlySpentMicro },
] as const satisfies ReadonlyArray<{ rule: RuleName; window: string; spent: (s: SpendState) => bigint }>;

export function checkWindowCaps(policy: WalletPolicy, request: SpendRequest, state: SpendState): Violation[] {
  const violations: Violation[] = [];
  for (const { rule, window, spent } of WINDOW_RULES) {
    const value = policy[rule];
    if (value === undefined) continue;
    const cap = parseUsd(value);
    const already = spent(state);
    if (already + request.amountMicro > cap) {
      violations.push({
        rule,
        message: `${window} spend would reach ${formatUsd(already + request.amountMicro)} USD, above the ${window} cap of ${formatUsd(cap)} USD`,
        limit: formatUsd(cap),
        attempted: formatUsd(request.amountMicro),
        spent: formatUsd(already),
      });
    }
  }
  return violations;
}
