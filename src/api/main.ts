/**
 * treasury-api entry point: config → database (refuses to start while a migration is pending) →
 * signer reachable → HTTP. SIGTERM/SIGINT: stop accepting, drain, close the signer client, destroy the
 * pool, stop the embedded database if we started it.
 */
import { loadAppConfig } from './config/app-config.js';
import { createKnex, listPendingMigrations } from './db/knex-client.js';
import { resolveDatabase } from './db/resolve-database.js';
import { createLogger } from './log/logger.js';
import { describeError } from './log/describe-error.js';
import { redactUrlsIn } from '../shared/redact-url.js';
import { createTreasuryApp } from './app.js';

async function main(): Promise<void> {
  const config = loadAppConfig();
  const log = createLogger(config.logLevel);
  const db = await resolveDatabase(config);
  const knex = createKnex(db.connectionString, config.dbPoolMax, 'treasury-api', log, config.dbSessionLimits);
  const pending = await listPendingMigrations(knex);
  if (pending.length > 0) {
    log.fatal({ pending }, 'database migrations are pending; run `npm run migrate` first');
    await knex.destroy();
    await db.stop();
    process.exit(3);
  }
  const app = createTreasuryApp({ config, knex, log });
  if (!config.adminToken) log.warn('TREASURY_ADMIN_TOKEN is not set: minting Treasury accounts is disabled');
  if (!(await app.services.signer.healthy())) log.warn({ socket: config.signerSocket }, 'signer not reachable yet; /readyz answers 503 until it is');
  // Retired keys whose destruction failed while the signer was away are destroyed now and every 10 minutes.
  const reconcile = () =>
    app.services.wallets.destroyRetiredKeys().then(
      (n) => n > 0 && log.info({ destroyed: n }, 'destroyed retired wallet keys'),
      () => undefined,
    );
  void reconcile();
  setInterval(() => void reconcile(), 10 * 60 * 1000).unref();
  // Reservations left by a process that stopped before recording them are given back once expired.
  const sweep = () =>
    app.services.expiredReservations.sweep().then(
      (n) => n > 0 && log.warn({ released: n }, 'released expired reservations that no process recorded'),
      (err: unknown) => log.warn({ err: describeError(err) }, 'expired reservation sweep failed; retried in a minute'),
    );
  void sweep();
  setInterval(() => void sweep(), 60 * 1000).unref();
  await app.listen(config.port, config.host);
  log.info({ url: `http://${config.host}:${config.port}`, embedded_database: db.embedded }, 'treasury-api ready');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await app.close();
    await knex.destroy();
    await db.stop();
    log.info('stopped');
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
  process.stderr.write(JSON.stringify({ level: 60, msg: 'treasury-api failed to start', err: redactUrlsIn(err instanceof Error ? err.message : String(err)) }) + '\n');
  process.exit(1);
});
