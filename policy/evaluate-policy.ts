/**
 * The policy evaluator: every rule of the wallet policy (docs/api.md, Policy) over one payment request, the
 * wallet's spend state and the time, all passed in. Returns every violated rule (not only the first), in
 * `RULE_NAMES` order, and the headroom left under each rule the policy sets (after this payment when allowed,
 * as it stands when denied).
 *
 * Protects against: money in floating point (bigint only); hidden inputs (no clock, no I/O — the same inputs
 * always give the same decision, so the caller can evaluate inside its transaction under the wallet lock and
 * record exactly what was decided); malformed inputs read as "no limit" — a stored policy that does not
 * parse, an unknown policy field, a non-positive amount, a bad address or an invalid state throw
 * `PolicyInputError`, and the caller fails closed.
 * Known limits: stale state — the caller must read `state` under the same lock it records the spend in;
 * the engine cannot know what "spent" should include (see ADR 0003: every signed authorization).
 */
import { isSolanaAddress } from './counterparty-address.js';
import { formatUsd } from './money.js';
import { PolicyInputError } from './policy-errors.js';
import type { WalletPolicy } from './policy-schema.js';
import { parsePolicy } from './parse-policy.js';
import type { Headroom, ParsedPolicy, PolicyDecision, SpendRequest, SpendState, Violation } from './policy-types.js';
import { checkCapabilityCap } from './rules/capability-cap.js';
import { checkCoolingOff, coolingOffRemainingSeconds } from './rules/cooling-off.js';
import { checkCounterpartyAllowlist } from './rules/counterparty-allowlist.js';
import { checkCounterpartyBlocklist } from './rules/counterparty-blocklist.js';
import { checkPerTxCap } from './rules/per-tx-cap.js';
import type { PolicyRule, RuleContext } from './rules/rule-context.js';
import { checkVelocityCap } from './rules/velocity-cap.js';
import { WINDOW_CAPS, checkDailyCap, checkMonthlyCap, checkWeeklyCap } from './rules/window-caps.js';

/** In `RULE_NAMES` order (the capability rule yields either of the last two names). */
const RULES: readonly PolicyRule[] = [
  checkPerTxCap,
  checkDailyCap,
  checkWeeklyCap,
  checkMonthlyCap,
  checkVelocityCap,
  checkCounterpartyAllowlist,
  checkCounterpartyBlocklist,
  checkCoolingOff,
  checkCapabilityCap,
];

const HEADROOM_FIELD = {
  daily_cap_usd: 'daily_usd',
  weekly_cap_usd: 'weekly_usd',
  monthly_cap_usd: 'monthly_usd',
} as const;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

function assertMicro(value: unknown, field: string, allowZero: boolean): void {
  if (typeof value !== 'bigint') throw new PolicyInputError(field, `expected a bigint, got ${typeof value}`);
  if (value < 0n || (!allowZero && value === 0n))
    throw new PolicyInputError(field, allowZero ? 'must not be negative' : 'must be positive');
}

function assertInputs(request: SpendRequest, state: SpendState, now: Date): void {
  if (request === null || typeof request !== 'object') throw new PolicyInputError('request', 'expected an object');
  if (request.kind !== 'pay' && request.kind !== 'transfer')
    throw new PolicyInputError('request.kind', "expected 'pay' or 'transfer'");
  assertMicro(request.amountMicro, 'request.amountMicro', false);
  if (typeof request.to !== 'string' || !(ADDRESS_RE.test(request.to) || isSolanaAddress(request.to)))
    throw new PolicyInputError('request.to', 'expected a 0x-prefixed 20-byte hex address or a base58 Solana address');
  if (request.capability !== undefined && typeof request.capability !== 'string')
    throw new PolicyInputError('request.capability', 'expected a string or undefined');
  if (state === null || typeof state !== 'object') throw new PolicyInputError('state', 'expected an object');
  assertMicro(state.dailySpentMicro, 'state.dailySpentMicro', true);
  assertMicro(state.weeklySpentMicro, 'state.weeklySpentMicro', true);
  assertMicro(state.monthlySpentMicro, 'state.monthlySpentMicro', true);
  if (!Number.isSafeInteger(state.recentCount) || state.recentCount < 0)
    throw new PolicyInputError('state.recentCount', 'expected a non-negative integer');
  if (
    state.lastPaymentAt !== null &&
    (!(state.lastPaymentAt instanceof Date) || Number.isNaN(state.lastPaymentAt.getTime()))
  ) {
    throw new PolicyInputError('state.lastPaymentAt', 'expected a valid Date or null');
  }
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new PolicyInputError('now', 'expected a valid Date');
}

function headroomOf(ctx: RuleContext, allowed: boolean): Headroom {
  const { policy, request, state, now } = ctx;
  const applied = allowed ? request.amountMicro : 0n;
  const headroom: Headroom = {};
  if (policy.perTxCapMicro !== undefined) headroom.per_tx_usd = formatUsd(policy.perTxCapMicro);
  for (const { rule, cap: capOf, spent } of WINDOW_CAPS) {
    const cap = capOf(policy);
    if (cap === undefined) continue;
    const left = cap - spent(state) - applied;
    headroom[HEADROOM_FIELD[rule]] = formatUsd(left > 0n ? left : 0n);
  }
  if (policy.velocityCap) {
    headroom.velocity_remaining = Math.max(0, policy.velocityCap.maxCount - state.recentCount - (allowed ? 1 : 0));
  }
  if (policy.coolingOffSeconds) {
    headroom.cooling_off_remaining_seconds = allowed
      ? policy.coolingOffSeconds
      : coolingOffRemainingSeconds(policy, state, now);
  }
  return headroom;
}

/**
 * The rules an already parsed policy's request violates, in `RULE_NAMES` order (empty: allowed), without the
 * headroom: for a caller that only decides (the signer's second check).
 */
export function policyViolations(
  policy: ParsedPolicy,
  request: SpendRequest,
  state: SpendState,
  now: Date,
): Violation[] {
  assertInputs(request, state, now);
  const ctx: RuleContext = { policy, request, state, now };
  const violations: Violation[] = [];
  for (const rule of RULES) {
    const violation = rule(ctx);
    if (violation !== null) violations.push(violation);
  }
  return violations;
}

/** Evaluates an already parsed policy (see `parsePolicy`); for callers that evaluate one policy many times. */
export function evaluateParsedPolicy(
  policy: ParsedPolicy,
  request: SpendRequest,
  state: SpendState,
  now: Date,
): PolicyDecision {
  const violations = policyViolations(policy, request, state, now);
  const allowed = violations.length === 0;
  return { allowed, violations, headroom: headroomOf({ policy, request, state, now }, allowed) };
}

/**
 * Evaluates a wallet policy (the stored canonical JSON; typed as `WalletPolicy`, re-checked by `parsePolicy`)
 * against one request. Throws `PolicyInputError` on malformed inputs; a denial is a value, never a throw.
 */
export function evaluatePolicy(
  policy: WalletPolicy,
  request: SpendRequest,
  state: SpendState,
  now: Date,
): PolicyDecision {
  return evaluateParsedPolicy(parsePolicy(policy), request, state, now);
}
