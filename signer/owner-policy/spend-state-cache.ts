/**
 * Each signed wallet's spend state as this process's own last commit left it (./signed-spends.ts), so that a busy
 * wallet's next batch is decided without reading the store again: one round trip per batch (the commit) instead
 * of two (the read and the commit).
 *
 * Why a decision on it is still the store's decision: the commit checks the policy version and spend counter the
 * state was built on (every statement that records a signed wallet's spend raises the counter, a policy change its
 * version), so a state that another process or statement changed never commits. A state that did not change can
 * only over-count since: spends leave the windows as time passes, and a give-back (a spend whose signature never
 * left) deletes a row without raising the counter. Every rule of a policy refuses more when more was spent
 * (policy/rules/: caps, counts, the last payment's instant), so a payment allowed on the remembered state is allowed
 * on the store's; one it refuses is decided again on a fresh read before it is refused.
 *
 * The velocity count is aged as the window slides (policy/velocity-window.ts): the state carries the times of the
 * window's oldest spends, and each that left takes one off. Without them a wallet held at its velocity cap — an
 * agent that pays until it is refused — was refused on its remembered count at every payment and decided again on
 * a read that counted its whole window (up to the cap's count of rows). Once the times it knew have all left, the
 * state names where to read the window on (`readOn`: ./signed-spends.ts reads the next times and those that left,
 * ./spend-statements.ts `readVelocityOn`), and its count until then errs high.
 *
 * Defends: a window, velocity count or cooling-off decided on less than the store holds — a state is used only with
 * the policy version it was read under and windows that start where its own did (the day, week and month starts
 * equal; the velocity window and look-back no earlier), and its velocity count loses only spends known to have left
 * the window (./spend-statements.ts reads their times with the count; ./signed-spends.ts adds those it commits).
 * Does not defend: what is decided (./owner-policies.ts).
 */
import type { SpendState } from '../../policy/policy-types.js';
import { ageVelocityWindowFrom, velocityReadPointFrom, type VelocityWindow } from '../../policy/velocity-window.js';
import type { ReadMark, ReadState, StateQuery } from './spend-statements.js';

/** The cache is bounded: past this many wallets it starts over (a wallet it forgets costs one read). */
const MAX_CACHED = 100_000;
/** After a remembered state failed its commit (another process spends from the wallet), read for this long. */
const CONTENDED_MS = 1000;

interface Entry {
  state: SpendState;
  mark: ReadMark;
  query: StateQuery;
  window: VelocityWindow;
}

const time = (d: Date | null) => (d === null ? null : d.getTime());

/** Whether a state summed for `was` counts at least what `now` would (same calendar windows, later sliding ones). */
function covers(was: StateQuery, now: StateQuery): boolean {
  if (time(was.dayStart) !== time(now.dayStart)) return false;
  if (time(was.weekStart) !== time(now.weekStart)) return false;
  if (time(was.monthStart) !== time(now.monthStart)) return false;
  if ((was.velocityStart === null) !== (now.velocityStart === null)) return false;
  if (was.velocityStart && now.velocityStart && now.velocityStart < was.velocityStart) return false;
  return now.since >= was.since;
}

export class SpendStateCache {
  private readonly entries = new Map<string, Entry>();
  private readonly contended = new Map<string, number>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The remembered state for `query` under policy `version`, if one may be decided on. */
  get(query: StateQuery, version: number): ReadState | undefined {
    const entry = this.entries.get(query.address);
    if (!entry || entry.mark.version !== version || !covers(entry.query, query)) return undefined;
    const until = this.contended.get(query.address);
    if (until !== undefined) {
      if (this.now() < until) return undefined;
      this.contended.delete(query.address);
    }
    const start = query.velocityStart;
    if (!start || time(start) === time(entry.query.velocityStart))
      return { state: entry.state, mark: entry.mark, window: entry.window };
    // `covers` held: the window starts no earlier than the entry's, so its known times that left come off.
    const startUs = start.getTime() * 1000;
    const window = ageVelocityWindowFrom(entry.window, startUs);
    if (window === entry.window) return { state: entry.state, mark: entry.mark, window };
    const state = { ...entry.state, recentCount: window.count };
    const readOn = velocityReadPointFrom(entry.window, startUs);
    return readOn ? { state, mark: entry.mark, window, readOn } : { state, mark: entry.mark, window };
  }

  /** Remembers the state a commit (or a read) left, with the counter it now holds and the velocity window behind its count. */
  set(query: StateQuery, state: SpendState, mark: ReadMark, window: VelocityWindow): void {
    if (this.entries.size >= MAX_CACHED && !this.entries.has(query.address)) this.entries.clear();
    this.entries.set(query.address, { state, mark, query, window });
  }

  /** Forgets a wallet's state (it no longer matches the store). */
  delete(address: string): void {
    this.entries.delete(address);
  }

  /** A remembered state failed its commit: forget it, and read the wallet for a while. */
  contend(address: string): void {
    this.entries.delete(address);
    if (this.contended.size >= MAX_CACHED) this.contended.clear();
    this.contended.set(address, this.now() + CONTENDED_MS);
  }
}
