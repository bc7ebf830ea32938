/**
 * Deadlines for the harnesses' waits on what they started or set going (a signer's `signer ready` line, an API
 * process's /readyz, a child's prompt on a terminal, a row the ledger verifier writes): how long the wait may take
 * on an idle machine, stretched by how oversubscribed the machine is when the deadline is judged.
 *
 * Defends the suites against a loaded runner. `npm test` runs three mocha workers beside the type check and the
 * linters on two cores, and the workers start signers, APIs, anvil, sandboxes and Chromium: a load of 10 to 20. A
 * start that takes 5 s alone took 30 to 40 s there (a signer's start is 2 to 4 s of CPU: its bundle loaded, the
 * token probed, its policy store migrated), and a fixed deadline failed it as if it had hung. The load is read
 * each time the deadline is judged, not once when the wait begins, so load that arrives during the wait counts;
 * once stretched, a deadline never shrinks.
 * What it still catches: a start that hangs, which passes even the stretched deadline, in minutes at most
 * (MAX_LOAD_STRETCH). A child that exits is each wait's own to notice, at once. It makes no test slower: a wait
 * ends as soon as what it waits for happens.
 */
import os from 'node:os';

/** However loaded the machine, a deadline is at most this many times its idle length. */
export const MAX_LOAD_STRETCH = 8;

/** The idle lengths a deadline may have: above zero, at most ten minutes. */
const MAX_IDLE_MS = 600_000;

/**
 * Runnable tasks per core over the last minute (the 1-minute load average over the cores this process may use),
 * within [1, MAX_LOAD_STRETCH]; 1 where the system reports no load average (Windows).
 */
export function loadStretch(): number {
  const perCore = (os.loadavg()[0] ?? 0) / Math.max(1, os.availableParallelism());
  return Math.min(MAX_LOAD_STRETCH, Math.max(1, perCore));
}

export interface LoadScaledDeadline {
  /** True once the wait has lasted longer than its idle length times the largest load stretch seen so far. */
  passed(): boolean;
  /** For a failure message: how long the wait lasted and what it was allowed, e.g. "41 s (30 s idle, ×5.2 load)". */
  describe(): string;
}

/** A deadline starting now, of `idleMs` on an idle machine (what the wait needs there, with a margin). */
export function loadScaledDeadline(idleMs: number): LoadScaledDeadline {
  if (!(idleMs > 0 && idleMs <= MAX_IDLE_MS)) throw new RangeError(`idleMs must be in (0, ${MAX_IDLE_MS}]`);
  const started = performance.now();
  let stretch = 1;
  const seconds = (ms: number) => (ms / 1000).toFixed(ms < 10_000 ? 1 : 0);
  return {
    passed() {
      stretch = Math.max(stretch, loadStretch());
      return performance.now() - started > idleMs * stretch;
    },
    describe() {
      const cores = os.availableParallelism();
      return `${seconds(performance.now() - started)} s (allowed ${seconds(idleMs * stretch)} s: ${seconds(idleMs)} s on an idle machine, ×${stretch.toFixed(1)} for a load of ${(os.loadavg()[0] ?? 0).toFixed(1)} on ${cores} core${cores === 1 ? '' : 's'})`;
    },
  };
}

/**
 * Calls `onPassed` once `deadline` passes, judged every `everyMs` (default 1 s), unless the returned `stop()` is called
 * first. The timer does not keep the process alive by itself.
 */
export function whenPassed(deadline: LoadScaledDeadline, onPassed: () => void, everyMs = 1_000): { stop(): void } {
  const timer = setInterval(() => {
    if (!deadline.passed()) return;
    clearInterval(timer);
    onPassed();
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
