/**
 * The gate's composition root (docs/gate.md): from a configuration, the facilitator client, the ledger
 * reporter (the gate bearer, to /v1/gate/ledger…), the replay guard, the payment-identifier store
 * (./payment-id-store.ts) and the paywall core shared by every seller, the catalogue source, the origin proxy
 * and the HTTP server; `listen` and an ordered `close` (stop accepting, drain, stop the catalogue refresh, send
 * the last ledger and uptime reports, close origin connections, close the metrics listener). With
 * GATE_METRICS_PORT, GET /metrics is served on a listener of its own (and not by the gate's: gate-server.ts),
 * which listens before the gate does and closes last. The uptime counts (uptime-buckets.ts) are
 * recorded per proxied request and reported on a timer; with GATE_PUBLIC_URL, the gate's public address is
 * proven to the platform once it listens (gate-address-proof.ts).
 * main.ts starts it from the environment; tests and the sandbox start it in-process.
 *
 * Defends against: two copies of the paywall's state (one replay guard and one ledger queue for the whole
 * gate, whatever the seller). Does not defend against: a second gate process — its replay guard is its own
 * (the token's on-chain nonce is the final guard, as for two middleware replicas).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeable, type Closeable } from '../../base/closeables.js';
import { createMetricsServer, listenOn, metricsListenerCloseables } from '../shared/metrics-listener.js';
import { resolveFacilitator, type FacilitatorLike } from '../x402/facilitator-client.js';
import type { FetchLike } from '../x402/bounded-fetch.js';
import { LedgerReporter } from '../x402/seller/ledger-reporter.js';
import { PaidRequestCore } from '../x402/seller/paid-request.js';
import { solanaFacilitatorOf } from '../x402/seller/solana-side.js';
import { ReplayGuard } from '../x402/seller/replay-guard.js';
import type { X402Logger } from '../x402/seller/x402-koa-options.js';
import { CatalogueSource } from './catalogue-source.js';
import type { GateConfig } from './gate-config.js';
import { createGateMetrics, type GateMetrics } from './gate-metrics.js';
import { createGateServer } from './gate-server.js';
import { OriginProxy } from './origin-proxy.js';
import type { UptimeBuckets } from './uptime-buckets.js';
import { createUptime, type UptimeReporter } from './uptime-reporter.js';
import { gatePaymentIdStore } from './payment-id-store.js';
import { createAddressProof, type GateAddressProof } from './gate-address-proof.js';

export interface GateApp {
  server: http.Server;
  /** With GATE_METRICS_PORT: the listener of GET /metrics alone. */
  metricsServer: http.Server | undefined;
  catalogue: CatalogueSource;
  metrics: GateMetrics;
  ledger: LedgerReporter;
  /** What the gate saw of the origins, and its reporter (docs/gate.md#uptime). */
  uptime: { buckets: UptimeBuckets; reporter: UptimeReporter };
  /** With GATE_PUBLIC_URL: the proof of the gate's public address (docs/gate.md#the-gates-public-address). */
  address: GateAddressProof | undefined;
  /** Starts the catalogue and listens; resolves with the gate's base URL. */
  listen(): Promise<string>;
  closeables(): Closeable[];
  /** Closes everything in order (tests; main.ts closes through base/shutdown-signals.ts). */
  close(): Promise<void>;
}

const silentLogger: X402Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** `server` listening on `at` (nothing when either is absent: no metrics listener configured). */
async function listenIfConfigured(
  server: http.Server | undefined,
  at: { port: number; host: string } | undefined,
): Promise<void> {
  if (server && at) await listenOn(server, at);
}

export interface GateAppOptions {
  logger?: X402Logger;
  fetch?: FetchLike;
  ledgerRetryDelaysMs?: readonly number[];
  /** A facilitator object instead of FACILITATOR_URL (the official `FacilitatorClient` shape; benchmarks). */
  facilitator?: FacilitatorLike;
}

export function createGateApp(config: GateConfig, options: GateAppOptions = {}): GateApp {
  const logger = options.logger ?? silentLogger;
  const doFetch: FetchLike | undefined = options.fetch; // undefined: the keep-alive pool (src/x402/pooled-request.ts)
  const metrics = createGateMetrics();
  const facilitator = resolveFacilitator(options.facilitator, config, doFetch);
  const solanaFacilitator = solanaFacilitatorOf(undefined, config.solanaFacilitatorUrl, config, doFetch);
  const ledger = new LedgerReporter({
    apiUrl: config.apiUrl,
    token: config.token,
    fetch: doFetch,
    timeoutMs: config.platformTimeoutMs,
    retryDelaysMs: options.ledgerRetryDelaysMs ?? [500, 2000, 8000],
    metrics: metrics.paywall,
    logger,
    routes: { batch: '/v1/gate/ledger/batch', single: '/v1/gate/ledger' },
  });
  const core = new PaidRequestCore({
    facilitator,
    solanaFacilitator,
    ledger,
    guard: new ReplayGuard(),
    paymentIds: gatePaymentIdStore(config, doFetch),
    metrics: metrics.paywall,
    logger,
  });
  const catalogue = new CatalogueSource(config, logger, metrics, doFetch, solanaFacilitator);
  const proxy = OriginProxy.forGate(config);
  const uptime = createUptime(config, doFetch, logger);
  const recording = config.uptimeReportMs > 0 ? uptime.buckets : undefined;
  const address = createAddressProof(config, doFetch, logger);
  const server = createGateServer({ config, catalogue, core, proxy, metrics, logger, uptime: recording, address });
  const metricsServer = config.metricsListener ? createMetricsServer(metrics.registry) : undefined;
  let drained: Promise<void> = Promise.resolve();

  const closeables = (): Closeable[] => [
    closeable('http_stop_accepting', () => {
      drained = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
    }),
    closeable(
      'http_drain',
      async () => {
        const cut = setTimeout(() => server.closeAllConnections(), 10_000).unref();
        try {
          await drained;
        } finally {
          clearTimeout(cut);
        }
      },
      11_000,
    ),
    closeable('catalogue_refresh', () => catalogue.stop()),
    closeable('address_proof', () => address?.stop()),
    closeable('ledger_reports', () => ledger.flush(), 15_000),
    closeable('uptime_reports', () => uptime.reporter.close(), 5_000),
    closeable('origin_connections', () => proxy.close()),
    ...metricsListenerCloseables(metricsServer),
  ];

  return {
    server,
    metricsServer,
    catalogue,
    metrics,
    ledger,
    uptime,
    address,
    async listen() {
      void catalogue.start();
      uptime.reporter.start();
      await listenIfConfigured(metricsServer, config.metricsListener);
      await listenIfConfigured(server, config);
      // The platform fetches the token from the public address: only once the gate answers there.
      void address?.start();
      const { port } = server.address() as AddressInfo;
      return `http://${config.host}:${port}`;
    },
    closeables,
    async close() {
      for (const step of closeables()) await step.close();
    },
  };
}
