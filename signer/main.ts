/**
 * treasury-signer entry point: config → PKCS#11 backend (refuses to start without the root KEK) → unix
 * socket server → "signer ready". SIGTERM/SIGINT: stop accepting, finish in-flight requests, close the
 * HSM sessions, finalise the module, remove the socket, exit 0. Logs are JSON on stderr, never the PIN.
 */
import { pino } from 'pino';
import { loadSignerConfig } from './config/signer-config.js';
import { Pkcs11Backend } from './backends/pkcs11/pkcs11-backend.js';
import { createSignerMetrics, serveSignerMetrics } from './metrics/signer-metrics.js';
import { SignerServer } from './server/signer-server.js';
import { SignerService } from './signer-service.js';

async function main(): Promise<void> {
  const config = loadSignerConfig();
  const log = pino({ name: 'treasury-signer', level: config.logLevel, base: { service: 'treasury-signer' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination(2));
  const metrics = createSignerMetrics();
  const backend = Pkcs11Backend.open(config.backend, {
    cacheHit: () => metrics.cacheHits.inc(),
    cacheMiss: () => metrics.cacheMisses.inc(),
    hsmOperation: (op, seconds) => metrics.hsm.observe({ op }, seconds),
  });
  const service = new SignerService(backend, config.invariants);
  const server = new SignerServer({ socketPath: config.socketPath, service, log, metrics, maxInFlight: config.backend.sessions * 4 });
  await server.listen();
  const metricsServer = config.metricsPort ? await serveSignerMetrics(metrics, config.metricsPort) : undefined;
  log.info({ socket: config.socketPath, backend: config.backend.kind, token: config.backend.tokenLabel, sessions: config.backend.sessions, metrics_port: config.metricsPort ?? null }, 'signer ready');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'signer shutting down');
    await server.close();
    metricsServer?.close();
    await backend.close();
    log.info('signer stopped');
    log.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  if (config.exitWithParent) {
    // Started by the sandbox: never outlive it, even if it was killed without a chance to stop us.
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) void shutdown('parent exited');
    }, 1000).unref();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(JSON.stringify({ level: 60, service: 'treasury-signer', msg: 'signer failed to start', err: err instanceof Error ? err.message : String(err) }) + '\n');
  process.exit(1);
});
