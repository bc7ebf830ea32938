/**
 * Types shared by the rules and the evaluator. Money is bigint micro-USD (1 USD = 1,000,000); addresses are
 * compared case-insensitively and reported checksummed; times are `Date`s passed in by the caller.
 *
 * Protects against: drifting rule names — `RULE_NAMES` is the one list (stable snake_case, used in API
 * bodies, decision rows and audit events); add to it, never rename.
 * Known limits: `Violation` carries rule-specific extra fields (e.g. `counterparty`, `retry_after_seconds`).
 */
export const RULE_NAMES = [
  'per_tx_cap_usd',
  'daily_cap_usd',
  'weekly_cap_usd',
  'monthly_cap_usd',
  'velocity_cap',
  'counterparty_allowlist',
  'counterparty_blocklist',
  'cooling_off',
  'capability_cap_usd',
  'transfer_not_permitted_with_capability_cap',
] as const;
export type RuleName = (typeof RULE_NAMES)[number];

export interface SpendRequest {
  kind: 'pay' | 'transfer';
  /** Amount in micro-USD (= raw USDC units); must be positive. */
  amountMicro: bigint;
  /** Recipient address, 0x + 40 hex digits, any case. */
  to: string;
  /** What a pay buys (e.g. `search.web`). Ignored on transfers. */
  capability?: string | undefined;
}

/** What the caller read from its store, inside the same transaction, under the wallet lock. */
export interface SpendState {
  /** Spent since `policyWindows(now).dayStart` (signed authorizations, settled or not). */
  dailySpentMicro: bigint;
  /** Spent since `policyWindows(now).weekStart`. */
  weeklySpentMicro: bigint;
  /** Spent since `policyWindows(now).monthStart`. */
  monthlySpentMicro: bigint;
  /** When the wallet's last payment was signed, or null if never. */
  lastPaymentAt: Date | null;
  /** Signed payments with `velocityWindowStart(policy, now) < created_at <= now`. */
  recentCount: number;
}

export interface Violation {
  rule: RuleName;
  /** One sentence for humans; not stable. */
  message: string;
  /** The limit that was hit (USD string, count or seconds as a string). */
  limit?: string;
  /** The amount the request asked for (USD string). */
  attempted?: string;
  [field: string]: unknown;
}

/**
 * What remains under each rule that has a headroom, only for rules the policy sets. When the decision is an
 * allow, the figures are after this payment; when it is a deny, they are as they stand (nothing was spent).
 * `per_tx_usd` is the per-transaction cap itself (it does not deplete).
 */
export interface Headroom {
  per_tx_usd?: string;
  daily_usd?: string;
  weekly_usd?: string;
  monthly_usd?: string;
  /** Payments left in the velocity window. */
  velocity_remaining?: number;
  /** Seconds until the next payment may be signed (after this one when allowed). */
  cooling_off_remaining_seconds?: number;
}

export interface PolicyDecision {
  allowed: boolean;
  /** Every violated rule, in `RULE_NAMES` order; empty when allowed. */
  violations: Violation[];
  headroom: Headroom;
}

/** The policy with every amount as bigint micro-USD, addresses lower-cased in sets, caps in a map. */
export interface ParsedPolicy {
  perTxCapMicro?: bigint;
  dailyCapMicro?: bigint;
  weeklyCapMicro?: bigint;
  monthlyCapMicro?: bigint;
  velocityCap?: { maxCount: number; windowSeconds: number };
  /** Lower-case addresses. An empty set allows no recipient. */
  counterpartyAllowlist?: ReadonlySet<string>;
  /** Lower-case addresses. */
  counterpartyBlocklist?: ReadonlySet<string>;
  /** Seconds; 0 means off. */
  coolingOffSeconds?: number;
  /** Capability-cap key (exact, `prefix*` or `*`) → cap in micro-USD. Absent or empty: no capability caps. */
  capabilityCaps?: ReadonlyMap<string, bigint>;
  /** With capability caps: a pay that names no capability is refused (`capability_required`). */
  capabilityRequired?: boolean;
  /** In an owner-signed policy: the owner lets the wallet's key be destroyed. No rule of a payment reads it. */
  allowKeyDestruction?: boolean;
}
