/**
 * The one shape every rule has: a pure function of (parsed policy, request, spend state, now) that returns
 * its violation or null. Rules never throw on a denial and never read anything else.
 *
 * Protects against: rules with hidden inputs (a clock, a cache) that would make a decision unrepeatable.
 * Known limits: inputs are trusted to be validated by `evaluatePolicy` before any rule runs.
 */
import type { ParsedPolicy, SpendRequest, SpendState, Violation } from '../policy-types.js';

export interface RuleContext {
  policy: ParsedPolicy;
  request: SpendRequest;
  state: SpendState;
  now: Date;
}

export type PolicyRule = (ctx: RuleContext) => Violation | null;
