/**
 * The wallet state each policy rule reads, declared per rule, and how that state moves when a payment is
 * written. The pay path remembers a wallet's snapshot between payments (./snapshot-cache.ts) and moves it
 * forward itself after each write it hands over; these declarations are what it moves.
 *
 * Defends: a stateful rule forgotten by the cache. `RULE_STATE` is keyed by policy/'s `RuleName`, so a rule
 * added to `RULE_NAMES` without declaring its state does not compile; a state key a rule declares must have
 * an entry in `STATE_AFTER_PAYMENT` (and every key of `SpendState` must be declared by some rule), so new
 * state cannot be added to policy/ without saying how a payment changes it.
 * Does not defend: a wrong declaration — the table tests in test/unit/pay check each rule's entry against
 * what the rule reads.
 */
import type { RuleName, SpendState } from '../../../policy/policy-types.js';

export type StateKey = keyof SpendState;

/** What each rule reads of the wallet's state (beyond the policy, the request and the time). */
export const RULE_STATE = {
  per_tx_cap_usd: [],
  daily_cap_usd: ['dailySpentMicro'],
  weekly_cap_usd: ['weeklySpentMicro'],
  monthly_cap_usd: ['monthlySpentMicro'],
  velocity_cap: ['recentCount'],
  counterparty_allowlist: [],
  counterparty_blocklist: [],
  cooling_off: ['lastPaymentAt'],
  capability_cap_usd: [],
  transfer_not_permitted_with_capability_cap: [],
} as const satisfies Record<RuleName, readonly StateKey[]>;

/** Every piece of state some rule declared. */
export type DeclaredStateKey = (typeof RULE_STATE)[RuleName][number];

/** Compiles only while every key of SpendState is declared by some rule (state no rule reads is not kept). */
type Undeclared = Exclude<StateKey, DeclaredStateKey>;
const everyStateKeyDeclared: [Undeclared] extends [never] ? true : Undeclared = true;
void everyStateKeyDeclared;

/** A payment written on top of the state: its amount and when it was decided. */
export interface WrittenPayment {
  amountMicro: bigint;
  at: Date;
}

/** For each declared piece of state: its value once `payment` is written. */
export const STATE_AFTER_PAYMENT: {
  readonly [K in DeclaredStateKey]: (state: SpendState, payment: WrittenPayment) => SpendState[K];
} = {
  dailySpentMicro: (s, p) => s.dailySpentMicro + p.amountMicro,
  weeklySpentMicro: (s, p) => s.weeklySpentMicro + p.amountMicro,
  monthlySpentMicro: (s, p) => s.monthlySpentMicro + p.amountMicro,
  lastPaymentAt: (_, p) => p.at,
  // The snapshot carries the window behind this count and ages it as time passes (policy/velocity-window.ts).
  recentCount: (s) => s.recentCount + 1,
};

/** The state keys to move after a payment: every key a rule declared, once each. */
export const DECLARED_STATE: readonly DeclaredStateKey[] = [...new Set(Object.values(RULE_STATE).flat())];

/** `state` once `payment` is written on top of it, moved key by key as the rules declared. */
export function stateAfterPayment(state: SpendState, payment: WrittenPayment): SpendState {
  const next: Record<string, unknown> = { ...state };
  for (const key of DECLARED_STATE) next[key] = STATE_AFTER_PAYMENT[key](state, payment);
  return next as unknown as SpendState;
}
