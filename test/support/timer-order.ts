/**
 * A sentinel timer, to bound an outcome by an order of events instead of a wall-clock budget.
 *
 * Timers of one event loop run in the order they expire, and the promise reactions a timer's callback sets
 * off run before the next timer's callback. So when the code under test ends on a timer of its own (a
 * time-out of 50 ms, a deadline of 700 ms) and every step after it is a promise reaction, its outcome is
 * seen before a sentinel that expires later has fired, however late the loaded machine runs both.
 * What it does not prove: anything about steps that wait on I/O (a socket, a child process), whose
 * completions are not ordered against timers; there, bound by a baseline (test/support/relative-budget.ts).
 */
export interface Sentinel {
  /** Whether the sentinel's timer has run. */
  readonly fired: boolean;
  /** Stops the timer (call it in a `finally`). */
  clear(): void;
}

/** A sentinel that fires `ms` after now. */
export function startSentinel(ms: number): Sentinel {
  let fired = false;
  const timer = setTimeout(() => {
    fired = true;
  }, ms);
  return {
    get fired() {
      return fired;
    },
    clear: () => clearTimeout(timer),
  };
}
