/**
 * treasury-signer entry point: config (once, frozen) → key backend (the PKCS#11 backend refuses to start
 * without a sound root KEK; the AWS KMS backend starts without calling KMS, and answers
 * `backend_unavailable` while KMS cannot be reached) → unix-socket server → optional loopback /metrics → one `signer ready` log line.
 * With TREASURY_SIGNER_LIMITS_STATE_FILE, the per-wallet windows are read back before serving and saved
 * while running. With a policy store, its generation is checked against TREASURY_SIGNER_STORE_WATERMARK_FILE
 * before serving: a store older than this signer has seen (restored from a backup) stops the start
 * (./owner-policy/store-watermark.ts), as does a store placed in the API's database.
 * SIGTERM/SIGINT close, in order and each bounded (base/closeables.ts, base/shutdown-signals.ts): the
 * metrics listener; the socket (stop accepting, finish accepted requests, remove the socket file); the limits
 * saver (its timer, then a last save); the policy store's connections (when TREASURY_SIGNER_DATABASE_URL set
 * one up: ./owner-policy/); the parent watch; the HSM sessions and the module. Every step is attempted and logged with its duration and outcome; exit 0, or 1
 * if any step failed. A second signal exits at once.
 *
 * Protects against: starting half-configured (exit 1 with a message naming what is wrong; in production mode also
 * with a PIN in the environment or a policy store without a watermark file: ./config/signer-production-mode.ts), secrets in
 * logs (JSON logs on stderr carry no PIN, key-ref bytes or signatures), and running on after an
 * unexpected exception (logged, exit 1: a signer in an unknown state stops rather than signs).
 * Known limits: one signer per socket path; a second instance replaces a stale socket but cannot detect a
 * live one that lost its socket file.
 */
import { pino } from 'pino';
import { createKeyBackend, type BackendObserver } from './backends/create-key-backend.js';
import type { KeyBackend } from './backends/key-backend.js';
import { loadSignerConfig, SignerConfigError, type SignerConfig } from './config/signer-config.js';
import { hsmThreadShortfall } from './config/hsm-threads.js';
import { RECOVERY_IMPLEMENTATION } from './ecdsa/recover-public-key.js';
import { persistLimits, type LimitsPersistence } from './limits/limits-state-file.js';
import { WalletLimiter } from './limits/wallet-limiter.js';
import { createSignerMetrics, serveSignerMetrics, type SignerMetrics } from './metrics/signer-metrics.js';
import { SignerServer } from './server/signer-server.js';
import { LOOK_BACK_SECONDS, OwnerPolicies } from './owner-policy/owner-policies.js';
import { PgOwnerPolicyStore } from './owner-policy/pg-owner-policy-store.js';
import { StorePlacementError } from './owner-policy/store-placement.js';
import { StoreWatermark, StoreWatermarkError } from './owner-policy/store-watermark.js';
import { SignerService } from './signer-service.js';
import { closeable, type Closeable } from '../base/closeables.js';
import { installShutdown, watchParent } from '../base/shutdown-signals.js';

/** One JSON line on stderr; a configuration refused (production mode's among them) carries its code and problems. */
function writeFatal(msg: string, err: unknown): void {
  process.stderr.write(
    JSON.stringify({
      level: 60,
      time: new Date().toISOString(),
      service: 'treasury-signer',
      msg,
      err: err instanceof Error ? err.message : String(err),
      ...(err instanceof SignerConfigError ? { code: err.code, problems: err.details.problems } : {}),
    }) + '\n',
  );
}

async function main(): Promise<void> {
  const config = loadSignerConfig();
  const log = createLog(config);
  warnOfThreadShortfall(config, log);
  let persistence: LimitsPersistence | undefined;
  exitOnCrash(() => persistence);

  const metrics = createSignerMetrics();
  const backend: KeyBackend = createKeyBackend(config.backend, backendObserver(metrics));
  const wallets = new WalletLimiter(config.walletLimits);
  try {
    if (config.limitsStateFile) {
      persistence = persistLimits(wallets, config.limitsStateFile, (err) =>
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'signer limits state not saved'),
      );
    }
  } catch (err) {
    await backend.close();
    throw err;
  }
  const ownerPolicies = await openOwnerPolicies(config, metrics, backend, log);
  const service = new SignerService({
    backend,
    invariants: config.invariants,
    limits: { wallets, refused: (limit) => metrics.limitRefusals.inc({ limit }) },
    ownerPolicies,
    signedEarly: (outcome) => metrics.earlySignatures.inc({ outcome }),
  });
  const server = new SignerServer({
    socketPath: config.socketPath,
    socketMode: config.socketMode,
    service,
    log,
    metrics,
    // PKCS#11: both cores busy from ≈4 signatures per session; KMS: network-bound, many may wait at once.
    maxInFlight: config.backend.kind === 'pkcs11' ? config.backend.sessions * 4 : config.backend.maxInFlight,
    maxQueue: config.maxQueue,
    idleTimeoutMs: config.idleTimeoutMs,
  });
  let metricsServer: Awaited<ReturnType<typeof serveSignerMetrics>> | undefined;
  try {
    await server.listen();
    if (config.metricsPort) metricsServer = await serveSignerMetrics(metrics, config.metricsPort);
  } catch (err) {
    await server.close().catch(() => undefined);
    persistence?.stop();
    await ownerPolicies?.close();
    await backend.close();
    throw err;
  }

  const timers: Closeable[] = [];
  const shutdown = installShutdown({
    log,
    label: 'signer',
    closeables: () => [
      closeable('metrics_server', () => closeMetricsServer(metricsServer), 2_000),
      closeable('signer_socket', () => server.close(), 10_000),
      closeable('limits_state_saver', () => persistence?.stop(), 5_000),
      ...(ownerPolicies ? [closeable('policy_store', () => ownerPolicies.close(), 5_000)] : []),
      ...timers,
      closeable('hsm_sessions', () => backend.close(), 10_000),
    ],
  });
  if (config.exitWithParent) {
    // Started by the sandbox: never outlive it, even if it was killed without a chance to stop us.
    timers.push(watchParent(shutdown));
  }

  log.info(readyFields(config), 'signer ready');
}

/**
 * The owner-signed policies' store (./owner-policy/), migrated before the signer serves; undefined when no
 * database is configured. A store that cannot be reached or migrated, one in the API's database, or one older than
 * the watermark file says this signer has seen, stops the start (exit 1).
 */
async function openOwnerPolicies(
  config: SignerConfig,
  metrics: SignerMetrics,
  backend: KeyBackend,
  log: ReturnType<typeof createLog>,
): Promise<OwnerPolicies | undefined> {
  const settings = config.ownerPolicies;
  if (!settings) return undefined;
  if (settings.watermarkFile === undefined)
    log.warn(
      'no TREASURY_SIGNER_STORE_WATERMARK_FILE (nor TREASURY_SIGNER_LIMITS_STATE_FILE beside which it is kept): a policy store restored from an older backup is not refused at start',
    );
  const watermark =
    settings.watermarkFile === undefined
      ? undefined
      : new StoreWatermark({ file: settings.watermarkFile, acceptGeneration: settings.acceptStoreGeneration, log });
  const store = new PgOwnerPolicyStore({
    connectionString: settings.databaseUrl,
    poolMax: settings.poolMax,
    openSpendLeaseMs: settings.openSpendLeaseMs,
    lookBackSeconds: LOOK_BACK_SECONDS,
    decidedOn: (source, wallets) => metrics.spendStates.inc({ source }, wallets),
    ...(watermark ? { watermark } : {}),
    log,
    placement: settings.placement,
  });
  try {
    await store.prepare();
  } catch (err) {
    await store.close().catch(() => undefined);
    await backend.close();
    // Refusals of the store itself say what they mean, whole.
    if (err instanceof StoreWatermarkError || err instanceof StorePlacementError) throw err;
    throw new Error(`the signer's policy store cannot be prepared: ${describeStoreError(err)}`);
  }
  return new OwnerPolicies({
    store,
    approver: settings.approver,
    observed: (state) => metrics.policyStates.inc({ policy: state }),
    refused: (rule) => metrics.policyRefusals.inc({ rule }),
  });
}

/** A store failure, named without the URL or its password (pg's messages carry neither). */
function describeStoreError(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return `${typeof code === 'string' ? code + ' ' : ''}${err instanceof Error ? err.message : String(err)}`.slice(
    0,
    300,
  );
}

/** JSON logs on stderr, written synchronously (a crash loses no line); they carry no PIN, key bytes or signature. */
function createLog(config: SignerConfig) {
  return pino(
    {
      name: 'treasury-signer',
      level: config.logLevel,
      base: { service: 'treasury-signer', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    pino.destination({ fd: 2, sync: true }),
  );
}

/** An unexpected exception or rejection: logged, the limits saved (best effort), exit 1. */
function exitOnCrash(persistence: () => LimitsPersistence | undefined): void {
  const crash = (msg: string, err: unknown) => {
    writeFatal(msg, err);
    try {
      persistence()?.flush();
    } catch {
      // Best effort on the way out.
    }
    process.exit(1);
  };
  process.on('uncaughtException', (err) => crash('signer crashed', err));
  process.on('unhandledRejection', (err) => crash('signer crashed (unhandled rejection)', err));
}

/** The key backend's events, counted in the signer's metrics. */
function backendObserver(metrics: SignerMetrics): BackendObserver {
  return {
    cacheHit: () => metrics.cacheHits.inc(),
    cacheMiss: () => metrics.cacheMisses.inc(),
    hsmOperation: (op, seconds) => metrics.hsm.observe({ op }, seconds),
    signed: (thread) => metrics.signatures.inc({ thread }),
    kmsRequest: (op, seconds, outcome) => metrics.kmsDuration.observe({ op, outcome }, seconds),
    kmsThrottle: (op) => metrics.kmsThrottles.inc({ op }),
    kmsRetry: (op, reason) => metrics.kmsRetries.inc({ op, reason }),
    kmsFailure: (op, reason) => metrics.kmsFailures.inc({ op, reason }),
  };
}

/** Sessions that cannot sign at once for lack of libuv threads (./config/hsm-threads.ts), said once at start. */
function warnOfThreadShortfall(config: SignerConfig, log: ReturnType<typeof createLog>): void {
  const shortfall = hsmThreadShortfall(
    config.backend.kind === 'pkcs11' ? config.backend.sessions : undefined,
    config.libuvThreads,
  );
  if (!shortfall) return;
  log.warn(
    { sessions: shortfall.sessions, libuv_threads: shortfall.threads },
    `TREASURY_PKCS11_SESSIONS is ${shortfall.sessions} but libuv runs the HSM's calls on ${shortfall.threads} threads: at most ${shortfall.threads} signatures at once; start the signer with UV_THREADPOOL_SIZE=${shortfall.sessions} or more (docs/deploy-hsm.md)`,
  );
}

/** What the `signer ready` line says of the configuration: no secret (the PIN is never in it). */
function readyFields(config: SignerConfig) {
  return {
    socket: config.socketPath,
    backend: config.backend.kind,
    ...(config.backend.kind === 'pkcs11'
      ? { token: config.backend.tokenLabel, sessions: config.backend.sessions, libuv_threads: config.libuvThreads }
      : {
          kms_region: config.backend.region,
          kms_endpoint: config.backend.endpoint ?? null,
          kms_sign_rate_per_second: config.backend.signRatePerSecond,
          kms_deadline_ms: config.backend.deadlineMs,
          kms_tombstone_file: config.backend.tombstoneFile ?? null,
        }),
    key_cache: config.backend.cacheSize,
    recovery: RECOVERY_IMPLEMENTATION,
    allowed_tokens: [
      ...config.invariants.allowedTokens.map((t) => `${t.chainId}:${t.address}`),
      ...config.invariants.solana.allowedMints.map((m) => `${m.network}:${m.mint}`),
    ],
    max_per_signature: String(config.invariants.maxValue),
    wallet_limits: Object.fromEntries(config.walletLimits.map((l) => [l.name, String(l.max)])),
    limits_state_file: config.limitsStateFile ?? null,
    store_watermark_file: config.ownerPolicies?.watermarkFile ?? null,
    owner_policies: config.ownerPolicies ? 'on' : 'off',
    policy_approver: config.ownerPolicies?.approver ?? null,
    metrics_port: config.metricsPort ?? null,
  };
}

/** Stops the loopback /metrics listener; a scraper's idle keep-alive connection does not hold it open. */
function closeMetricsServer(
  server: { close(cb: () => void): void; closeIdleConnections(): void } | undefined,
): Promise<void> {
  if (!server) return Promise.resolve();
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

main().catch((err: unknown) => {
  writeFatal('signer failed to start', err);
  process.exit(1);
});
