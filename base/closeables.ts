/**
 * Ordered shutdown: a process lists what it must close — servers, in-flight work, timers and workers,
 * clients, pools, HSM sessions — as closeables, in the order they must close (the reverse of opening:
 * stop accepting, drain, stop timers and workers, close clients, destroy pools), and `closeInOrder` closes
 * them one after another. Every step is bounded by its own `timeoutMs` and every step is attempted, even
 * after one failed or hung; each step's outcome and duration is reported as it ends and all of them once at
 * the end, so the caller can log them and exit non-zero when any failed. Used by src/api/main.ts and
 * signer/main.ts (with ./shutdown-signals.ts), and by the API's in-process `close()`.
 *
 * Defends against: a shutdown that stops at the first failing step (leaving the pool or HSM sessions
 * open), one that hangs forever on a step that never settles, and timers left running after the process
 * claims to have stopped.
 * Does not defend: a step that timed out is abandoned, not cancelled — its work may still run until the
 * process exits; a step that blocks the event loop cannot be bounded (no timer fires).
 */

export interface Closeable {
  /** snake_case, as it appears in the logs (`http_server`, `database_pool`). */
  readonly name: string;
  close(): Promise<void> | void;
  /** Longest wait for this step; after it the step counts as `timed_out` and the next one starts. */
  readonly timeoutMs: number;
}

export type CloseOutcome = 'closed' | 'failed' | 'timed_out';

export interface CloseStep {
  name: string;
  outcome: CloseOutcome;
  duration_ms: number;
  /** The error's message when `failed` (a step's own errors carry no secrets: they are our own). */
  error?: string;
}

export interface CloseReport {
  /** Every step closed within its bound. */
  ok: boolean;
  steps: CloseStep[];
  failed: string[];
}

/** Closes `closeables` in order, each bounded by its `timeoutMs`; `onStep` sees each step as it ends. */
export async function closeInOrder(
  closeables: readonly Closeable[],
  onStep: (step: CloseStep) => void = () => undefined,
): Promise<CloseReport> {
  const steps: CloseStep[] = [];
  for (const closeable of closeables) {
    const step = await closeOne(closeable);
    steps.push(step);
    try {
      onStep(step);
    } catch {
      // A failing logger does not stop the shutdown.
    }
  }
  const failed = steps.filter((s) => s.outcome !== 'closed').map((s) => s.name);
  return { ok: failed.length === 0, steps, failed };
}

async function closeOne(closeable: Closeable): Promise<CloseStep> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timed_out'>((resolve) => {
    timer = setTimeout(() => resolve('timed_out'), closeable.timeoutMs);
  });
  try {
    // Called inside the promise so a step that throws synchronously is a failed step too.
    const closed = new Promise<void>((resolve) => resolve(closeable.close())).then(() => 'closed' as const);
    const outcome = await Promise.race([closed, timedOut]);
    return { name: closeable.name, outcome, duration_ms: elapsed() };
  } catch (err) {
    return {
      name: closeable.name,
      outcome: 'failed',
      duration_ms: elapsed(),
      error: err instanceof Error ? err.message : String(err),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** A closeable for work that needs no waiting (clearing a timer, closing a client): bounded anyway. */
export function closeable(name: string, close: () => Promise<void> | void, timeoutMs = 5_000): Closeable {
  return { name, close, timeoutMs };
}
