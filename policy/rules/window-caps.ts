/**
 * daily_cap_usd, weekly_cap_usd, monthly_cap_usd: refused when spent-in-window + amount > cap; reaching the
 * cap exactly is allowed. Windows are UTC calendar windows (see policy-windows.ts); "spent" is what the
 * caller summed since the window start — every signed authorization, settled or not (see ADR 0003).
 *
 * Protects against: a slow drain by many payments that each pass the per-tx cap.
 * Known limits: calendar windows reset at the boundary, so up to 2× a cap can be spent across a midnight
 * (or Monday, or the 1st); the velocity cap and a smaller per-tx cap bound that burst.
 */
import { formatUsd } from '../money.js';
import type { ParsedPolicy, RuleName, SpendState, Violation } from '../policy-types.js';
import type { RuleContext } from './rule-context.js';

type WindowRule = Extract<RuleName, 'daily_cap_usd' | 'weekly_cap_usd' | 'monthly_cap_usd'>;

export const WINDOW_CAPS = [
  {
    rule: 'daily_cap_usd',
    window: 'daily',
    cap: (p: ParsedPolicy) => p.dailyCapMicro,
    spent: (s: SpendState) => s.dailySpentMicro,
  },
  {
    rule: 'weekly_cap_usd',
    window: 'weekly',
    cap: (p: ParsedPolicy) => p.weeklyCapMicro,
    spent: (s: SpendState) => s.weeklySpentMicro,
  },
  {
    rule: 'monthly_cap_usd',
    window: 'monthly',
    cap: (p: ParsedPolicy) => p.monthlyCapMicro,
    spent: (s: SpendState) => s.monthlySpentMicro,
  },
] as const satisfies ReadonlyArray<{
  rule: WindowRule;
  window: string;
  cap: (p: ParsedPolicy) => bigint | undefined;
  spent: (s: SpendState) => bigint;
}>;

function checkWindowCap(index: 0 | 1 | 2, { policy, request, state }: RuleContext): Violation | null {
  const { rule, window, cap: capOf, spent: spentOf } = WINDOW_CAPS[index];
  const cap = capOf(policy);
  if (cap === undefined) return null;
  const spent = spentOf(state);
  const total = spent + request.amountMicro;
  if (total <= cap) return null;
  return {
    rule,
    message: `${window} spend would reach ${formatUsd(total)} USD, above the ${window} cap of ${formatUsd(cap)} USD`,
    limit: formatUsd(cap),
    attempted: formatUsd(request.amountMicro),
    spent: formatUsd(spent),
  };
}

export const checkDailyCap = (ctx: RuleContext): Violation | null => checkWindowCap(0, ctx);
export const checkWeeklyCap = (ctx: RuleContext): Violation | null => checkWindowCap(1, ctx);
export const checkMonthlyCap = (ctx: RuleContext): Violation | null => checkWindowCap(2, ctx);
