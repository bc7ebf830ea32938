/**
 * One batch of payment spends (./spend-batcher.ts groups them) in the signer's store, in two steps:
 *  1. the wallets not known to hold a signed policy: their spends are recorded by one statement
 *     (./spend-statements.ts `recordOpenSpends`), which leaves out any wallet whose row holds a policy — also one
 *     signed since this process last looked — and any wallet the store has no row for;
 *  2. the wallets with a signed policy: one transaction locks their rows FOR UPDATE, sums their spends over the
 *     policy's windows, has each entry decided in arrival order on its wallet's state (an allowed spend counts for
 *     the next entry of the same wallet), inserts the allowed spends and commits.
 * Every outcome resolves after the statement or transaction holding its spend committed.
 *
 * Defends: a decision on a stale state (step 2 sums under the lock, in a statement after it); a wallet signed
 * while step 1 runs (its lock orders it before the policy: ./spend-statements.ts); `withPolicy` is a hint only —
 * a policy is never removed, and a wallet it misses is still caught by step 1's re-check.
 * Does not defend: what is decided (the entries' `decide`, pure checks of ./owner-policies.ts).
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { WalletPolicy } from '../../policy/policy-schema.js';
import type { SpendState } from '../../policy/policy-types.js';
import type { Spend, SpendQuery, SpendVerdict, StoredPolicy, WalletRecord } from './owner-policy-store.js';
import {
  insertSpends,
  lockWallets,
  readSpendStates,
  recordOpenSpends,
  type SpendRow,
  type StateQuery,
  type WalletRow,
} from './spend-statements.js';

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

export interface SpendBatchContext {
  pool: pg.Pool;
  /** How far back the last payment is looked for (the longest cooling-off a policy may set), in ms. */
  lookBackMs: number;
  /** Wallets (lower-case) seen with a signed policy: they skip step 1. */
  withPolicy: Set<string>;
  transaction<T>(run: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  toRecord(row: WalletRow): WalletRecord;
}

interface Pending {
  index: number;
  entry: SpendEntry;
  row: SpendRow;
}

/** The hint is bounded: past this many wallets it starts over (a wallet it forgets costs one more statement). */
const MAX_REMEMBERED = 100_000;

function remember(withPolicy: Set<string>, address: string): void {
  if (withPolicy.size >= MAX_REMEMBERED) withPolicy.clear();
  withPolicy.add(address);
}

/** Runs one batch; an outcome per entry, in order. */
export async function runSpendBatch(ctx: SpendBatchContext, entries: readonly SpendEntry[]): Promise<Outcome[]> {
  const refs = randomBytes(16 * entries.length).toString('hex');
  const pending: Pending[] = entries.map((entry, index) => ({
    index,
    entry,
    row: [
      refs.slice(index * 32, index * 32 + 32),
      entry.spend.address.toLowerCase(),
      entry.spend.amount.toString(),
      entry.spend.payee.toLowerCase(),
      entry.spend.at,
    ],
  }));
  const outcomes: Outcome[] = new Array<Outcome>(entries.length);
  const open = pending.filter((p) => !ctx.withPolicy.has(p.row[1]));
  const rest = pending.filter((p) => ctx.withPolicy.has(p.row[1]));
  if (open.length > 0) {
    const found = await recordOpenSpends(
      ctx.pool,
      open.map((p) => p.row),
    );
    for (const p of open) {
      const outcome = found.get(p.row[1]);
      if (outcome === 'recorded') outcomes[p.index] = { kind: 'recorded', id: p.row[0], signed: false };
      else if (outcome === 'has_policy') {
        remember(ctx.withPolicy, p.row[1]);
        rest.push(p);
      } else outcomes[p.index] = { kind: 'unrecorded' };
    }
  }
  if (rest.length > 0) {
    rest.sort((a, b) => a.index - b.index);
    const decided = await ctx.transaction((client) => decideUnderLock(ctx, client, rest));
    rest.forEach((p, i) => (outcomes[p.index] = decided[i]!));
  }
  return outcomes;
}

/** Step 2: lock, sum, decide in order, insert the allowed spends (the caller's transaction commits them). */
async function decideUnderLock(ctx: SpendBatchContext, client: pg.PoolClient, rest: Pending[]): Promise<Outcome[]> {
  const rows = await lockWallets(client, [...new Set(rest.map((p) => p.row[1]))]);
  const records = new Map(rows.map((r) => [r.address, ctx.toRecord(r)]));
  const queries = stateQueries(ctx.lookBackMs, rest, records);
  const states = queries.length > 0 ? await readSpendStates(client, queries) : new Map<string, SpendState>();
  const inserts: SpendRow[] = [];
  const outcomes = rest.map((p) => decideEntry(p, records, states, inserts));
  if (inserts.length > 0) await insertSpends(client, inserts);
  return outcomes;
}

/** What to sum for each wallet of the batch that has a signed policy, by its first entry's windows. */
function stateQueries(lookBackMs: number, rest: Pending[], records: Map<string, WalletRecord>): StateQuery[] {
  const queries = new Map<string, StateQuery>();
  for (const { entry, row } of rest) {
    const key = row[1];
    const current = records.get(key)?.current;
    if (!current || queries.has(key)) continue;
    const q = entry.query(current.policy);
    const starts = [
      q.dayStart,
      q.weekStart,
      q.monthStart,
      q.velocityStart,
      new Date(entry.spend.at.getTime() - lookBackMs),
    ];
    const since = new Date(Math.min(...starts.flatMap((d) => (d ? [d.getTime()] : []))));
    queries.set(key, { ...q, address: key, since });
  }
  return [...queries.values()];
}

/** A wallet's state after one more spend of `amount` at `at` (the next entry of the same batch decides on it). */
function withSpend(state: SpendState, amount: bigint, at: Date): SpendState {
  return {
    dailySpentMicro: state.dailySpentMicro + amount,
    weeklySpentMicro: state.weeklySpentMicro + amount,
    monthlySpentMicro: state.monthlySpentMicro + amount,
    recentCount: state.recentCount + (amount > 0n ? 1 : 0),
    lastPaymentAt: amount > 0n ? at : state.lastPaymentAt,
  };
}

/** One entry's outcome, in batch order; a recorded spend joins the inserts and the wallet's state. */
function decideEntry(
  { entry, row }: Pending,
  records: Map<string, WalletRecord>,
  states: Map<string, SpendState>,
  inserts: SpendRow[],
): Outcome {
  const key = row[1];
  const record = records.get(key);
  if (!record) return { kind: 'unrecorded' };
  // A row without a policy here (it cannot lose one; a hint may be early): recorded under the lock, undecided.
  if (!record.current) {
    inserts.push(row);
    return { kind: 'recorded', id: row[0], signed: false };
  }
  const state = states.get(key)!;
  let verdict: SpendVerdict<unknown>;
  try {
    verdict = entry.decide(record.current, state);
  } catch (error) {
    return { kind: 'failed', error };
  }
  if (!verdict.record) return { kind: 'refused', refusal: verdict.refusal };
  states.set(key, withSpend(state, entry.spend.amount, entry.spend.at));
  inserts.push(row);
  return { kind: 'recorded', id: row[0], signed: true };
}
