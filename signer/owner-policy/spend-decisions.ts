/**
 * The pure part of a batch of spends (./spend-batch.ts): the entries and their outcomes, what to sum for each
 * wallet of a batch, and each entry's decision in arrival order on its wallet's state (an allowed spend counts
 * for the next entry of the same wallet). No I/O.
 *
 * Defends: two entries of one batch deciding on the same state (each sees the spends allowed before it).
 * Does not defend: what is decided — the entries' `decide` (./owner-policies.ts).
 */
import type { WalletPolicy } from '../../policy/policy-schema.js';
import type { SpendState } from '../../policy/policy-types.js';
import type { Spend, SpendQuery, SpendVerdict, StoredPolicy } from './owner-policy-store.js';
import type { SpendRow, StateQuery } from './spend-statements.js';

export type Outcome =
  | { kind: 'recorded'; id: string; signed: boolean }
  | { kind: 'refused'; refusal: unknown }
  | { kind: 'unrecorded' }
  | { kind: 'failed'; error: unknown };

export interface SpendEntry {
  spend: Spend;
  query: (policy: WalletPolicy) => SpendQuery;
  decide: (current: StoredPolicy, state: SpendState) => SpendVerdict<unknown>;
}

/** An entry of the batch, its place in it, and the spend row it would insert (`row[1]`: the wallet as the store keeps it). */
export interface Pending {
  index: number;
  entry: SpendEntry;
  row: SpendRow;
}

/** What to sum for each wallet of `pending` that has a policy in `policies`, by its first entry's windows. */
export function stateQueries(
  lookBackMs: number,
  pending: readonly Pending[],
  policies: (address: string) => StoredPolicy | null | undefined,
): StateQuery[] {
  const queries = new Map<string, StateQuery>();
  for (const { entry, row } of pending) {
    const key = row[1];
    const current = policies(key);
    if (!current || queries.has(key)) continue;
    queries.set(key, stateQuery(lookBackMs, entry, key, current));
  }
  return [...queries.values()];
}

/** What to sum for `entry`'s wallet (`address`, as the store keeps it) under `current`: its windows, back to the earliest. */
export function stateQuery(lookBackMs: number, entry: SpendEntry, address: string, current: StoredPolicy): StateQuery {
  const q = entry.query(current.policy);
  let since = entry.spend.at.getTime() - lookBackMs;
  for (const start of [q.dayStart, q.weekStart, q.monthStart, q.velocityStart]) {
    if (start && start.getTime() < since) since = start.getTime();
  }
  return { ...q, address, since: new Date(since) };
}

/** A wallet's state after one more spend of `amount` at `at` (the next entry of the same batch decides on it). */
export function withSpend(state: SpendState, amount: bigint, at: Date): SpendState {
  return {
    dailySpentMicro: state.dailySpentMicro + amount,
    weeklySpentMicro: state.weeklySpentMicro + amount,
    monthlySpentMicro: state.monthlySpentMicro + amount,
    recentCount: state.recentCount + (amount > 0n ? 1 : 0),
    // The latest of the two, as the store's max(signed_at) would be (clocks may step back).
    lastPaymentAt: amount > 0n && !(state.lastPaymentAt && state.lastPaymentAt > at) ? at : state.lastPaymentAt,
  };
}

/**
 * Decides `pending` in order on the wallets' policies and states (`states` is advanced by each allowed spend);
 * the allowed spends' rows are pushed to `inserts`. A wallet with no policy records its spends undecided.
 */
export function decideInOrder(
  pending: readonly Pending[],
  policies: (address: string) => StoredPolicy | null,
  states: Map<string, SpendState>,
  inserts: SpendRow[],
): Outcome[] {
  return pending.map(({ entry, row }) => {
    const current = policies(row[1]);
    if (!current) {
      inserts.push(row);
      return { kind: 'recorded', id: row[0], signed: false };
    }
    const state = states.get(row[1])!;
    let verdict: SpendVerdict<unknown>;
    try {
      verdict = entry.decide(current, state);
    } catch (error) {
      return { kind: 'failed', error };
    }
    if (!verdict.record) return { kind: 'refused', refusal: verdict.refusal };
    states.set(row[1], withSpend(state, entry.spend.amount, entry.spend.at));
    inserts.push(row);
    return { kind: 'recorded', id: row[0], signed: true };
  });
}
