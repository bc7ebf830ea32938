/**
 * The policy evaluator: every rule of spec §2.3 over one payment request, the wallet's spend state and the
 * time, all passed in. Returns every violated rule (not only the first) and the headroom left.
 *
 * Defends: money as bigint only, no clock, no I/O — the same inputs always give the same decision, so the
 * caller can evaluate inside its transaction under the wallet lock and record exactly what was decided.
 * Does not defend: stale state — the caller must read `state` under the same lock it records the spend in.
 */
import { formatUsd, parseUsd } from './money.js';
import type { WalletPolicy } from './policy-schema.js';
import type { Headroom, PolicyDecision, SpendRequest, SpendState, Violation } from './policy-types.js';
import { checkCapabilityCap } from './rules/capability-cap.js';
import { checkCoolingOff, coolingOffRemainingSeconds } from './rules/cooling-off.js';
import { checkCounterpartyAllowlist, checkCounterpartyBlocklist } from './rules/counterparty-lists.js';
import { checkPerTxCap } from './rules/per-tx-cap.js';
import { checkVelocityCap } from './rules/velocity-cap.js';
import { WINDOW_RULES, checkWindowCaps } from './rules/window-caps.js';

const HEADROOM_FIELD = { daily_cap_usd: 'daily_usd', weekly_cap_usd: 'weekly_usd', monthly_cap_usd: 'monthly_usd' } as const;

export function evaluatePolicy(policy: WalletPolicy, request: SpendRequest, state: SpendState, now: Date): PolicyDecision {
  if (request.amountMicro <= 0n) throw new RangeError('amountMicro must be positive');
  const violations: Violation[] = [
    checkPerTxCap(policy, request),
    ...checkWindowCaps(policy, request, state),
    checkVelocityCap(policy, state),
    checkCounterpartyAllowlist(policy, request),
    checkCounterpartyBlocklist(policy, request),
    checkCoolingOff(policy, state, now),
    checkCapabilityCap(policy, request),
  ].filter((v): v is Violation => v !== null);
  const allowed = violations.length === 0;
  const applied = allowed ? request.amountMicro : 0n;

  const headroom: Headroom = {};
  if (policy.per_tx_cap_usd !== undefined) headroom.per_tx_usd = policy.per_tx_cap_usd;
  for (const { rule, spent } of WINDOW_RULES) {
    const value = policy[rule];
    if (value === undefined) continue;
    const left = parseUsd(value) - spent(state) - applied;
    headroom[HEADROOM_FIELD[rule]] = formatUsd(left > 0n ? left : 0n);
  }
  if (policy.velocity_cap) {
    headroom.velocity_remaining = Math.max(0, policy.velocity_cap.max_count - state.recentCount - (allowed ? 1 : 0));
  }
  if (policy.cooling_off) {
    headroom.cooling_off_remaining_seconds = allowed ? policy.cooling_off : coolingOffRemainingSeconds(policy, state, now);
  }
  return { allowed, violations, headroom };
}
