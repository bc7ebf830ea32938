/**
 * treasury-gate entry point (`npm run gate`, the Dockerfile's `gate` target; docs/gate.md): configuration from
 * the environment (gate-config.ts), then the gate (gate-app.ts) listening (and its metrics listener, with
 * GATE_METRICS_PORT); SIGTERM/SIGINT close it in order,
 * each step bounded and logged (base/shutdown-signals.ts). Logs are JSON lines (pino) with the bearer redacted.
 */
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { Closeable } from '../../base/closeables.js';
import { installShutdown, watchParent } from '../../base/shutdown-signals.js';
import { createGateApp } from './gate-app.js';
import { GateConfigError, loadGateConfig } from './gate-config.js';

async function main(): Promise<void> {
  const config = loadGateConfig();
  const log = pino({
    name: 'treasury-gate',
    level: config.logLevel,
    base: { service: 'treasury-gate' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['authorization', 'token', '*.authorization', '*.token'], censor: '[redacted]' },
  });
  const gate = createGateApp(config, { logger: log });
  const watchers: Closeable[] = [];
  const shutdown = installShutdown({
    log,
    label: 'treasury-gate',
    closeables: () => [...gate.closeables(), ...watchers],
  });
  // Started by the sandbox: never outlive it.
  if (config.exitWithParent) watchers.push(watchParent(shutdown));
  const url = await gate.listen();
  const metrics = gate.metricsServer?.address() as AddressInfo | null | undefined;
  log.info(
    {
      url,
      metrics_url: metrics ? `http://${config.metricsListener?.host}:${metrics.port}/metrics` : `${url}/metrics`,
      api_url: config.apiUrl,
      facilitator: config.facilitatorUrl !== undefined,
    },
    'treasury-gate ready',
  );
}

main().catch((err: unknown) => {
  const problems = err instanceof GateConfigError ? err.details.problems : undefined;
  process.stderr.write(
    JSON.stringify({
      level: 60,
      msg: 'treasury-gate failed to start',
      err: err instanceof Error ? err.message : String(err),
      ...(problems ? { problems } : {}),
    }) + '\n',
  );
  process.exit(1);
});
