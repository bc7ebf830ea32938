/**
 * One batch of payment spends (./spend-batcher.ts groups them) in the signer's store, in two steps:
 *  1. the wallets this process does not know to hold a signed policy: their spends are recorded by one statement
 *     (./spend-statements.ts `recordOpenSpends`), which leaves out any wallet whose row holds a policy — also one
 *     signed since this process last looked — and any wallet the store has no row for;
 *  2. the wallets with a signed policy: decided on a snapshot and committed only if it still holds
 *     (./signed-spends.ts), each wallet's batches in turn within this process (./wallet-turns.ts).
 * Every outcome resolves after the statement or transaction holding its spend committed.
 *
 * Defends: a wallet signed while step 1 runs (its lock orders it before the policy: ./spend-statements.ts); the
 * policy cache is a hint for step 1 only — a policy is never removed, and a wallet it misses is still caught by
 * step 1's re-check on the row.
 * Does not defend: what is decided (the entries' `decide`, pure checks of ./owner-policies.ts).
 */
import { counterpartyKey } from '../../policy/counterparty-address.js';
import { decideSignedSpends, type SignedSpendsContext } from './signed-spends.js';
import type { Outcome, Pending, SpendEntry } from './spend-decisions.js';
import { nextSpendRef } from './spend-refs.js';
import { recordOpenSpends, type SpendRow } from './spend-statements.js';
import type { WalletTurns } from './wallet-turns.js';

export type { Outcome, SpendEntry } from './spend-decisions.js';

export interface SpendBatchContext extends SignedSpendsContext {
  turns: WalletTurns;
  /** Told of each wallet whose spends step 1 recorded, with when its statement was sent (monotonic ms). */
  recordedOpen?: (address: string, sentAt: number, rows: readonly SpendRow[]) => void;
}

/** Runs one batch; an outcome per entry, in order. */
export async function runSpendBatch(ctx: SpendBatchContext, entries: readonly SpendEntry[]): Promise<Outcome[]> {
  const pending: Pending[] = entries.map((entry, index) => ({
    index,
    entry,
    row: [
      nextSpendRef(),
      counterpartyKey(entry.spend.address),
      entry.spend.amount.toString(),
      counterpartyKey(entry.spend.payee),
      entry.spend.at,
    ],
  }));
  const outcomes: Outcome[] = new Array<Outcome>(entries.length);
  const signed = pending.filter((p) => ctx.policies.get(p.row[1]));
  const open = pending.filter((p) => !ctx.policies.get(p.row[1]));
  if (open.length > 0) {
    const rows = open.map((p) => p.row);
    const sentAt = performance.now();
    const found = await recordOpenSpends(ctx.pool, rows);
    for (const [address, outcome] of found) if (outcome === 'recorded') ctx.recordedOpen?.(address, sentAt, rows);
    for (const p of open) {
      const outcome = found.get(p.row[1]);
      if (outcome === 'recorded') outcomes[p.index] = { kind: 'recorded', id: p.row[0], signed: false };
      else if (outcome === 'has_policy') signed.push(p);
      else outcomes[p.index] = { kind: 'unrecorded' };
    }
  }
  if (signed.length > 0) {
    signed.sort((a, b) => a.index - b.index);
    const endTurn = await ctx.turns.claim([...new Set(signed.map((p) => p.row[1]))]);
    try {
      for (const [index, outcome] of await decideSignedSpends(ctx, signed)) outcomes[index] = outcome;
    } finally {
      endTurn();
    }
  }
  return outcomes;
}
