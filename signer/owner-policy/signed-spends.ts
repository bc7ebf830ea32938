/**
 * The spends of wallets with a signed policy (./spend-batch.ts step 2), decided on a snapshot and committed only
 * if the snapshot still holds: one statement sums each wallet's spends and reads its policy version and spend
 * counter (`readSpendStates`, no transaction); the entries are decided in order (./spend-decisions.ts); one
 * statement then locks the rows, checks that version and counter are unchanged, raises the counter and inserts
 * the allowed spends (`commitDecidedSpends`). Every statement that records a signed wallet's spend raises its
 * counter, and a policy change raises its version, so a commit that passes the check decided on every spend
 * and on the policy the store holds: the same decision as under the row lock, in two round trips instead of
 * five — one when the wallet's state is remembered from this process's last commit (./spend-state-cache.ts: a
 * refusal on it is made again on a read). A wallet whose check fails is decided again on a new snapshot; after
 * three tries, under the row lock in one transaction (the former path, which always progresses).
 *
 * Defends: a decision on stale windows or an outdated policy (the check), a lost spend (each outcome resolves
 * after its statement committed), a wallet starved by a busier process (the locked fallback).
 * Does not defend: what is decided (./owner-policies.ts), the order of wallets' batches within a process
 * (./wallet-turns.ts).
 */
import type pg from 'pg';
import type { SpendState } from '../../policy/policy-types.js';
import { addToVelocityWindow, velocityWindowReadOn, type VelocityWindow } from '../../policy/velocity-window.js';
import type { StoredPolicy, WalletRecord } from './owner-policy-store.js';
import { decideInOrder, stateQueries, type Outcome, type Pending } from './spend-decisions.js';
import type { SpendStateCache } from './spend-state-cache.js';
import {
  commitDecidedSpends,
  insertLockedSpends,
  lockWallets,
  readSpendStates,
  readVelocityOn,
  readWallets,
  type ReadState,
  type SpendRow,
  type StateQuery,
  type WalletRow,
} from './spend-statements.js';

/** Tries on a snapshot before the locked transaction. */
const SNAPSHOT_ATTEMPTS = 3;
/** The policy cache is bounded: past this many wallets it starts over (a wallet it forgets costs one read). */
const MAX_CACHED = 100_000;

/**
 * Each wallet's current policy as this process last read it (checked against the store at every commit). `seen` is
 * told of every wallet read with one (a policy is never removed: ./open-spend-leases.ts `hasPolicy`).
 */
export class PolicyCache {
  private readonly policies = new Map<string, StoredPolicy>();

  constructor(private readonly seen?: (address: string) => void) {}

  get(address: string): StoredPolicy | undefined {
    return this.policies.get(address);
  }

  set(address: string, policy: StoredPolicy): void {
    if (this.policies.size >= MAX_CACHED && !this.policies.has(address)) this.policies.clear();
    this.policies.set(address, policy);
    this.seen?.(address);
  }

  delete(address: string): void {
    this.policies.delete(address);
  }
}

/**
 * Where a try took a wallet's state from: remembered from this process's last commit (with its velocity window
 * read on when its known times had all left, counted again as `velocity_read_on`), or read.
 */
export type SpendStateSource = 'remembered' | 'read' | 'velocity_read_on';

export interface SignedSpendsContext {
  pool: pg.Pool;
  lookBackMs: number;
  policies: PolicyCache;
  /** Each wallet's state after this process's last commit (absent: every decision reads the store). */
  states?: SpendStateCache;
  /** Told how many wallets' states a try decided on, by where they came from (the metric). */
  decidedOn?: (source: SpendStateSource, wallets: number) => void;
  transaction<T>(run: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  toRecord(row: WalletRow): WalletRecord;
}

/** Decides and records `pending` (wallets believed to hold a policy); an outcome per entry, by its index. */
export async function decideSignedSpends(ctx: SignedSpendsContext, pending: Pending[]): Promise<Map<number, Outcome>> {
  const outcomes = new Map<number, Outcome>();
  let todo = pending;
  const locked: Pending[] = [];
  for (let attempt = 0; attempt < SNAPSHOT_ATTEMPTS && todo.length > 0; attempt++) {
    todo = await onSnapshot(ctx, todo, outcomes, locked);
  }
  locked.push(...todo);
  if (locked.length > 0) {
    locked.sort((a, b) => a.index - b.index);
    const decided = await ctx.transaction((client) => decideUnderLock(ctx, client, locked));
    locked.forEach((p, i) => outcomes.set(p.index, decided[i]!));
  }
  return outcomes;
}

/** Reads the rows of wallets whose policy is not cached: caches it; no row: unrecorded; no policy: `locked`. */
async function loadPolicies(
  ctx: SignedSpendsContext,
  todo: Pending[],
  outcomes: Map<number, Outcome>,
  locked: Pending[],
): Promise<Pending[]> {
  const missing = [...new Set(todo.map((p) => p.row[1]).filter((a) => !ctx.policies.get(a)))];
  if (missing.length === 0) return todo;
  const rows = new Map((await readWallets(ctx.pool, missing)).map((r) => [r.address, ctx.toRecord(r)]));
  for (const [address, record] of rows) if (record.current) ctx.policies.set(address, record.current);
  return todo.filter((p) => {
    if (ctx.policies.get(p.row[1])) return true;
    if (rows.has(p.row[1])) locked.push(p);
    else outcomes.set(p.index, { kind: 'unrecorded' });
    return false;
  });
}

/**
 * The state each wallet of `ready` is decided on: remembered from this process's last commit when it may be
 * (./spend-state-cache.ts), else read — every read in one statement. Returns them with the wallets remembered.
 */
async function spendStates(
  ctx: SignedSpendsContext,
  queries: StateQuery[],
  policy: (address: string) => StoredPolicy | null,
): Promise<{ read: Map<string, ReadState>; remembered: Set<string> }> {
  const remembered = new Set<string>();
  const found = new Map<string, ReadState>();
  const readOn: Array<{ query: StateQuery; kept: ReadState }> = [];
  const toRead = queries.filter((q) => {
    const kept = ctx.states?.get(q, policy(q.address)!.version);
    if (!kept) return true;
    if (kept.readOn) readOn.push({ query: q, kept });
    else found.set(q.address, kept);
    remembered.add(q.address);
    return false;
  });
  if (readOn.length > 0) {
    const readsOn = await readWindowsOn(ctx, readOn);
    for (const { query } of readOn)
      if (!readsOn.has(query.address)) {
        remembered.delete(query.address);
        toRead.push(query);
      }
    for (const [a, r] of readsOn) found.set(a, r);
  }
  if (toRead.length > 0) for (const [a, r] of await readSpendStates(ctx.pool, toRead)) found.set(a, r);
  if (remembered.size > 0) ctx.decidedOn?.('remembered', remembered.size);
  if (toRead.length > 0) ctx.decidedOn?.('read', toRead.length);
  return { read: found, remembered };
}

/**
 * Remembered states whose velocity windows ran out of known times, with each window read on (one statement:
 * `readVelocityOn`); a wallet whose read on cannot agree with its count is left out (the caller reads it in full).
 * Its batches take turns in this process (./wallet-turns.ts), so its spends recorded here have all committed.
 */
async function readWindowsOn(
  ctx: SignedSpendsContext,
  items: ReadonlyArray<{ query: StateQuery; kept: ReadState }>,
): Promise<Map<string, ReadState>> {
  const found = await readVelocityOn(
    ctx.pool,
    items.map(({ query, kept }) => ({
      address: query.address,
      point: kept.readOn!,
      velocityStart: query.velocityStart!,
    })),
  );
  const out = new Map<string, ReadState>();
  for (const { query, kept } of items) {
    const readOn = found.get(query.address);
    const window = readOn && velocityWindowReadOn(kept.readOn!, readOn);
    if (!window) continue;
    out.set(query.address, { state: { ...kept.state, recentCount: window.count }, mark: kept.mark, window });
  }
  if (out.size > 0) ctx.decidedOn?.('velocity_read_on', out.size);
  return out;
}

/** One try on a snapshot; returns the entries to decide again (their wallet changed since the snapshot). */
async function onSnapshot(
  ctx: SignedSpendsContext,
  todo: Pending[],
  outcomes: Map<number, Outcome>,
  locked: Pending[],
): Promise<Pending[]> {
  const ready = await loadPolicies(ctx, todo, outcomes, locked);
  if (ready.length === 0) return [];
  const policy = (address: string) => ctx.policies.get(address) ?? null;
  const queries = stateQueries(ctx.lookBackMs, ready, policy);
  const { read, remembered } = await spendStates(ctx, queries, policy);
  const again: Pending[] = [];
  const current = ready.filter((p) => {
    const mark = read.get(p.row[1])?.mark;
    if (mark && mark.version === policy(p.row[1])?.version) return true;
    // The policy changed since this process read it: read it again.
    ctx.policies.delete(p.row[1]);
    ctx.states?.delete(p.row[1]);
    again.push(p);
    return false;
  });
  const states = new Map<string, SpendState>([...read].map(([address, r]) => [address, r.state]));
  const inserts: SpendRow[] = [];
  const decided = decideInOrder(current, policy, states, inserts);
  // A refusal on a remembered state (which may over-count) is made again on a read before it stands.
  const recheck = new Set(current.flatMap((p, i) => (decided[i]!.kind === 'refused' ? [p.row[1]] : [])));
  for (const address of recheck) if (!remembered.has(address)) recheck.delete(address);
  const writing = new Set(inserts.map((r) => r[1]).filter((a) => !recheck.has(a)));
  const committed =
    writing.size > 0
      ? await commitDecidedSpends(
          ctx.pool,
          [...writing].map((a) => read.get(a)!.mark),
          inserts.filter((r) => writing.has(r[1])),
        )
      : new Map<string, string>();
  remember(ctx, queries, read, { states, inserts }, committed, writing, recheck, remembered);
  current.forEach((p, i) => {
    const address = p.row[1];
    if (recheck.has(address) || (writing.has(address) && !committed.has(address))) again.push(p);
    else outcomes.set(p.index, decided[i]!);
  });
  return again.sort((a, b) => a.index - b.index);
}

/**
 * What the store holds of each wallet after this try, for the next batch (./spend-state-cache.ts): a committed
 * wallet's state after its spends, and its velocity window with their times (`after.inserts`, in the order decided).
 */
function remember(
  ctx: SignedSpendsContext,
  queries: readonly StateQuery[],
  read: Map<string, ReadState>,
  after: { states: Map<string, SpendState>; inserts: readonly SpendRow[] },
  committed: Map<string, string>,
  writing: Set<string>,
  recheck: Set<string>,
  remembered: Set<string>,
): void {
  if (!ctx.states) return;
  let byWallet: Map<string, SpendRow[]> | undefined;
  for (const q of queries) {
    const was = read.get(q.address);
    if (!was) continue;
    const seq = committed.get(q.address);
    if (seq !== undefined) {
      // Only a velocity cap reads the window: without one it stays empty, and the inserts need not be looked at.
      if (q.velocityStart && !byWallet) byWallet = rowsByWallet(after.inserts);
      const window = q.velocityStart ? windowAfter(was.window, byWallet!.get(q.address) ?? []) : was.window;
      ctx.states.set(q, after.states.get(q.address)!, { ...was.mark, seq }, window);
    } else if (recheck.has(q.address)) ctx.states.delete(q.address);
    else if (writing.has(q.address)) {
      if (remembered.has(q.address)) ctx.states.contend(q.address);
      else ctx.states.delete(q.address);
    } else if (!remembered.has(q.address)) ctx.states.set(q, was.state, was.mark, was.window);
  }
}

/** `window` with a wallet's spends `rows` added, as its count was (./spend-decisions.ts `withSpend`: amount > 0). */
function windowAfter(window: VelocityWindow, rows: readonly SpendRow[]): VelocityWindow {
  let w = window;
  for (const row of rows) if (BigInt(row[2]) > 0n) w = addToVelocityWindow(w, row[4]);
  return w;
}

/** The rows of each wallet, in the order decided. */
function rowsByWallet(rows: readonly SpendRow[]): Map<string, SpendRow[]> {
  const byWallet = new Map<string, SpendRow[]>();
  for (const row of rows) {
    const list = byWallet.get(row[1]);
    if (list) list.push(row);
    else byWallet.set(row[1], [row]);
  }
  return byWallet;
}

/** The fallback, in the caller's transaction: lock the rows, sum, decide in order, insert (raising counters). */
async function decideUnderLock(
  ctx: SignedSpendsContext,
  client: pg.PoolClient,
  pending: Pending[],
): Promise<Outcome[]> {
  const rows = await lockWallets(client, [...new Set(pending.map((p) => p.row[1]))]);
  // What is recorded here raises the counters: a remembered state would fail its next commit.
  for (const row of rows) ctx.states?.delete(row.address);
  const records = new Map(rows.map((r) => [r.address, ctx.toRecord(r)]));
  for (const [address, record] of records) if (record.current) ctx.policies.set(address, record.current);
  const policy = (address: string) => records.get(address)?.current ?? null;
  const queries = stateQueries(ctx.lookBackMs, pending, policy);
  const read = queries.length > 0 ? await readSpendStates(client, queries) : new Map();
  const states = new Map<string, SpendState>([...read].map(([address, r]) => [address, r.state]));
  const recorded = pending.filter((p) => records.has(p.row[1]));
  const inserts: SpendRow[] = [];
  const decided = decideInOrder(recorded, policy, states, inserts);
  if (inserts.length > 0) await insertLockedSpends(client, inserts);
  const byIndex = new Map(recorded.map((p, i) => [p.index, decided[i]!]));
  return pending.map((p) => byIndex.get(p.index) ?? { kind: 'unrecorded' });
}
