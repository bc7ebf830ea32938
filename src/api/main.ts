/**
 * treasury-api entry point: config → database (refuses to start while a migration is pending) →
 * signer reachable → background loops → HTTP. SIGTERM/SIGINT close, in order and each bounded
 * (base/closeables.ts, base/shutdown-signals.ts): stop accepting, drain in-flight requests, stop the
 * ledger verifier, the rate-limit clean-up, the retired-key reconciler, the expired-reservation sweeper, the
 * payment-identifier sweeper, the rejected ledger rows' retention sweep and the parent watch, close the pay
 * path's connections and the signer client,
 * close the metrics listener (TREASURY_METRICS_PORT: /metrics there and no longer on the API's own listener;
 * scraped while the API drains), destroy the pool, stop the embedded database if we started it. Every step is
 * attempted and logged (`shutdown step`, with its duration and outcome); the exit code is 1 if any failed. A
 * second signal exits at once.
 */
import http from 'node:http';
import { loadAppConfig } from './config/app-config.js';
import { productionRefusal } from './config/production-mode.js';
import { installedPayFaultHooks } from './pay/pay-fault-hooks.js';
import { SweepIncompleteError } from './pay/expired-reservation-sweeper.js';
import { createKnex, listPendingMigrations } from './db/knex-client.js';
import { resolveDatabase } from './db/resolve-database.js';
import { createLogger, type Logger } from './log/logger.js';
import { describeError } from './log/describe-error.js';
import { redactUrlsIn } from '../shared/redact-url.js';
import { createTreasuryApp, type TreasuryApp } from './app.js';
import { closeable, type Closeable } from '../../base/closeables.js';
import { createMetricsServer, listenOn, metricsListenerCloseables } from '../shared/metrics-listener.js';
import { startRepeatingTask } from '../../base/repeating-task.js';
import { installShutdown, watchParent } from '../../base/shutdown-signals.js';
import { startRejectedLedgerSweep } from './sellers/ledger/rejected-ledger-sweeper.js';

/** What a failed sweep logs: how many it released and failed (never a bind value), and the first error. */
function sweepFailureFields(err: unknown): Record<string, unknown> {
  return err instanceof SweepIncompleteError
    ? { released: err.released, failed: err.failed, err: describeError(err.firstError) }
    : { err: describeError(err) };
}

/** The process's own background loops: retired keys, expired reservations, expired payment-identifier rows. */
function startWorkers(app: TreasuryApp, log: Logger): Closeable[] {
  return [
    // Retired keys whose destruction failed while the signer was away are destroyed now and every 10 minutes.
    startRepeatingTask({
      name: 'retired_key_reconciler',
      everyMs: 10 * 60 * 1000,
      run: () =>
        app.services.wallets.destroyRetiredKeys().then(
          (n) => n > 0 && log.info({ destroyed: n }, 'destroyed retired wallet keys'),
          (err: unknown) =>
            log.warn({ err: describeError(err) }, 'retired key reconciliation failed; retried in 10 minutes'),
        ),
    }),
    // Reservations left by a process that stopped before recording them are given back once expired.
    startRepeatingTask({
      name: 'expired_reservation_sweeper',
      everyMs: 60 * 1000,
      run: () =>
        app.services.expiredReservations.sweep().then(
          (n) => n > 0 && log.warn({ released: n }, 'released expired reservations that no process recorded'),
          (err: unknown) => log.warn(sweepFailureFields(err), 'expired reservation sweep failed; retried in a minute'),
        ),
    }),
    // Expired payment-identifier rows of every seller leave the database (bounded batches; a failing seller is
    // logged by the sweep and skipped), whether or not the seller writes again.
    startRepeatingTask({
      name: 'payment_id_sweeper',
      everyMs: 60 * 1000,
      run: () =>
        app.services.paymentIdSweeper.sweep().then(
          (r) => r.deleted > 0 && log.info(r, 'deleted expired payment-identifier rows'),
          (err: unknown) =>
            log.warn({ err: describeError(err) }, 'payment-identifier sweep failed; retried in a minute'),
        ),
    }),
  ];
}

async function main(): Promise<void> {
  const refusal = productionRefusal(process.env, {
    execArgv: process.execArgv,
    faultHooksInstalled: Object.keys(installedPayFaultHooks()).length > 0,
  });
  if (refusal) {
    process.stderr.write(
      JSON.stringify({
        level: 60,
        msg: `treasury-api refuses to start in production mode: ${refusal.setting} ${refusal.reason}`,
        setting: refusal.setting,
      }) + '\n',
    );
    process.exit(1);
  }
  const config = loadAppConfig();
  const log = createLogger(config.logLevel);
  const db = await resolveDatabase(config);
  const knex = createKnex(
    db.connectionString,
    config.dbPoolMax,
    'treasury-api',
    log,
    config.dbSessionLimits,
    config.dbPoolIdleMs,
  );
  const pending = await listPendingMigrations(knex);
  if (pending.length > 0) {
    log.fatal({ pending }, 'database migrations are pending; run `npm run migrate` first');
    await knex.destroy();
    await db.stop();
    process.exit(3);
  }
  const app = createTreasuryApp({ config, knex, log });
  if (!config.adminToken) log.warn('TREASURY_ADMIN_TOKEN is not set: minting Treasury accounts is disabled');
  if (!(await app.services.signer.healthy()))
    log.warn({ socket: config.signerSocket }, 'signer not reachable yet; /readyz answers 503 until it is');
  // The process's own background loops, closed after the drain and before the pool (the app's come first).
  const workers = [...startWorkers(app, log), startRejectedLedgerSweep(knex, app.metrics, config, log)];
  let metricsServer: http.Server | undefined;
  const shutdown = installShutdown({
    log,
    closeables: () => [
      ...app.closeables(workers),
      ...metricsListenerCloseables(metricsServer, 2_000),
      closeable('database_pool', () => knex.destroy(), 5_000),
      closeable('embedded_database', () => db.stop(), 20_000),
    ],
  });
  if (config.exitWithParent) {
    // Started by the sandbox: never outlive it, even if it was killed without a chance to stop us.
    workers.push(watchParent(shutdown));
  }
  if (config.metricsListener) {
    metricsServer = createMetricsServer(app.metrics.registry);
    await listenOn(metricsServer, config.metricsListener);
  }
  await app.listen(config.port, config.host);
  log.info(
    {
      url: `${config.tls ? 'https' : 'http'}://${config.host}:${config.port}`,
      metrics_url: config.metricsListener
        ? `http://${config.metricsListener.host}:${config.metricsListener.port}/metrics`
        : `${config.tls ? 'https' : 'http'}://${config.host}:${config.port}/metrics`,
      embedded_database: db.embedded,
      production: config.production,
    },
    'treasury-api ready',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(
    JSON.stringify({
      level: 60,
      msg: 'treasury-api failed to start',
      err: redactUrlsIn(err instanceof Error ? err.message : String(err)),
    }) + '\n',
  );
  process.exit(1);
});
