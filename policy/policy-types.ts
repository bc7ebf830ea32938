/**
 * Types shared by the rules and the evaluator. Money is bigint micro-USD (1 USD = 1,000,000); addresses are
 * compared case-insensitively and reported checksummed.
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
  amountMicro: bigint;
  /** Recipient address (any case). */
  to: string;
  capability?: string | undefined;
}

/** What the caller read from its store, inside the same transaction, under the wallet lock. */
export interface SpendState {
  dailySpentMicro: bigint;
  weeklySpentMicro: bigint;
  monthlySpentMicro: bigint;
  lastPaymentAt: Date | null;
  /** Signed payments within the velocity window ending now. */
  recentCount: number;
}

export interface Violation {
  rule: RuleName;
  message: string;
  limit?: string;
  attempted?: string;
  [field: string]: unknown;
}

export interface Headroom {
  per_tx_usd?: string;
  daily_usd?: string;
  weekly_usd?: string;
  monthly_usd?: string;
  velocity_remaining?: number;
  cooling_off_remaining_seconds?: number;
}

export interface PolicyDecision {
  allowed: boolean;
  violations: Violation[];
  /** What remains in each window after this decision: after the payment when allowed, as now when denied. */
  headroom: Headroom;
}
