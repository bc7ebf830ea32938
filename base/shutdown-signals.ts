/**
 * How a process stops on SIGTERM or SIGINT: the first signal (or `trigger`, e.g. when the parent process
 * went away) closes the process's closeables in order (./closeables.ts), logging each step as one JSON
 * line (name, duration, outcome) and the failures at the end, then exits 0 — or 1 when any step failed or
 * timed out. A second signal while that runs forces the exit at once (code 130), for an operator who does
 * not want to wait for a drain.
 *
 * Defends against: a shutdown copied by hand into each entry point and drifting apart, a stop that a
 * hung step holds forever (each step is bounded), and a clean exit code after a failed step.
 * Does not defend: what runs after `exit` (nothing should); the process's own uncaught-exception
 * handlers stay the caller's.
 */
import { closeable, closeInOrder, type Closeable, type CloseReport, type CloseStep } from './closeables.js';

export interface ShutdownLog {
  info(fields: object, msg: string): void;
  error(fields: object, msg: string): void;
  /** Writes out what is buffered, then calls back (pino's `flush`): the last lines reach the log, in order, before exit. */
  flush?(callback: (err?: Error) => void): void;
}

/** The longest the exit waits for the log to drain. */
const LOG_FLUSH_BOUND_MS = 2_000;

export interface ShutdownOptions {
  /** The closeables, in closing order; read when the shutdown starts (so late-opened ones are included). */
  closeables: () => readonly Closeable[];
  log: ShutdownLog;
  /** Prefix of the first and last lines (`signer` → "signer shutting down", "signer stopped"). */
  label?: string;
  /** Test seams: where signals come from and how the process exits. */
  signals?: Pick<NodeJS.EventEmitter, 'on'>;
  exit?: (code: number) => void;
}

export interface Shutdown {
  /** Starts the shutdown for `reason` (a signal name or e.g. `parent exited`); a second call forces the exit. */
  trigger(reason: string): void;
  /** The report once the closeables were closed (undefined before a shutdown started). */
  readonly finished: Promise<CloseReport> | undefined;
}

export const FORCED_EXIT_CODE = 130;

export function installShutdown(options: ShutdownOptions): Shutdown {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const { log } = options;
  const prefix = options.label ? `${options.label} ` : '';
  let finished: Promise<CloseReport> | undefined;
  const trigger = (reason: string) => {
    if (finished) {
      log.error({ reason }, 'second signal during shutdown: exiting now');
      exit(FORCED_EXIT_CODE);
      return;
    }
    log.info({ reason }, `${prefix}shutting down`);
    let position = 0;
    finished = closeInOrder(options.closeables(), (step: CloseStep) => {
      const fields = {
        step: step.name,
        // 1 for the first step closed: the order holds however the lines reach a log collector.
        position: ++position,
        outcome: step.outcome,
        duration_ms: step.duration_ms,
        ...(step.error ? { error: step.error } : {}),
      };
      if (step.outcome === 'closed') log.info(fields, 'shutdown step');
      else log.error(fields, 'shutdown step');
    });
    void finished.then((report) => {
      if (report.ok) log.info({ steps: report.steps.length }, `${prefix}stopped`);
      else log.error({ failed: report.failed }, `${prefix}stopped with failed shutdown steps`);
      const code = report.ok ? 0 : 1;
      if (!log.flush) return exit(code);
      let exited = false;
      const exitOnce = () => {
        if (exited) return;
        exited = true;
        exit(code);
      };
      setTimeout(exitOnce, LOG_FLUSH_BOUND_MS);
      try {
        log.flush(() => exitOnce());
      } catch {
        exitOnce();
      }
    });
  };
  const signals = options.signals ?? process;
  signals.on('SIGTERM', () => trigger('SIGTERM'));
  signals.on('SIGINT', () => trigger('SIGINT'));
  return {
    trigger,
    get finished() {
      return finished;
    },
  };
}

/**
 * For a process another one started (the sandbox): every `everyMs` it checks whether that parent is gone
 * (the parent pid changed) and then triggers the shutdown, once. The closeable it returns stops the watch.
 * `ppid` is a test seam.
 */
export function watchParent(
  shutdown: Pick<Shutdown, 'trigger'>,
  options: { everyMs?: number; ppid?: () => number } = {},
): Closeable {
  const ppid = options.ppid ?? (() => process.ppid);
  const parent = ppid();
  const watch = setInterval(() => {
    if (ppid() === parent) return;
    clearInterval(watch);
    shutdown.trigger('parent exited');
  }, options.everyMs ?? 1000).unref();
  return closeable('parent_watch', () => clearInterval(watch), 1_000);
}
