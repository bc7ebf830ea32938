/**
 * A background loop a process starts at boot (a sweeper, a reconciler, a clean-up): runs `run` now (unless
 * `runAtStart` is false) and then `everyMs` after each run ended, never two runs at once. It is a
 * closeable (./closeables.ts): closing it stops the timer and waits for the run in flight, so a shutdown
 * does not destroy the database pool under a sweep.
 *
 * Defends against: loops started with a bare `setInterval` that nothing stops, runs that overlap when one
 * is slower than the interval, and a rejected run becoming an unhandled rejection (the loop goes on).
 * Does not defend: `run` is not cancelled when closing — it is awaited, within the closeable's bound.
 * The timer is unref'd: a loop alone never keeps a process alive.
 */
import type { Closeable } from './closeables.js';

export interface RepeatingTaskOptions {
  name: string;
  everyMs: number;
  run: () => Promise<unknown>;
  /** Run once at start rather than after the first interval (default true). */
  runAtStart?: boolean;
  /** Longest wait for a run in flight when closing (default 5 s). */
  timeoutMs?: number;
}

export interface RepeatingTask extends Closeable {
  /** Whether a run is in flight (for tests and the shutdown log). */
  readonly running: boolean;
}

export function startRepeatingTask(options: RepeatingTaskOptions): RepeatingTask {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  const tick = () => {
    timer = undefined;
    inFlight = options
      .run()
      .then(
        () => undefined,
        () => undefined, // the task logs its own failures; the loop goes on
      )
      .finally(() => {
        inFlight = undefined;
        schedule(options.everyMs);
      });
  };
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(tick, ms);
    timer.unref();
  };
  schedule(options.runAtStart === false ? options.everyMs : 0);
  return {
    name: options.name,
    timeoutMs: options.timeoutMs ?? 5_000,
    get running() {
      return inFlight !== undefined;
    },
    async close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await inFlight;
    },
  };
}
