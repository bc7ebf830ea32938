/**
 * A listener of its own for Prometheus' /metrics (TREASURY_METRICS_PORT in the API, GATE_METRICS_PORT in the
 * gate): GET or HEAD /metrics answers the registry's text; any other method or path is 404 with no body. Plain
 * HTTP, for a scraper on the host or the container network.
 *
 * Defends: the public listener from serving every tenant's counts (the process serves /metrics only here once
 * this is configured); a slow client holding the listener (request and header timeouts).
 * Does not defend: who reaches the port (bind it to loopback or an internal network).
 */
import http from 'node:http';
import { closeable, type Closeable } from '../../base/closeables.js';

/** What the listener reads of a prom-client Registry. */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}

/** The metrics listener's server, not yet listening. */
export function createMetricsServer(registry: MetricsSource): http.Server {
  const server = http.createServer({ maxHeaderSize: 16 * 1024 }, (req, res) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || req.url !== '/metrics') return void res.writeHead(404).end();
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  return server;
}

/** Resolves once `server` listens on `at`; rejects with the listen error (a port in use). */
export function listenOn(server: http.Server, at: { port: number; host: string }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => resolve());
  });
}

/** Its closing step, when there is one: it stops accepting, and a scrape still open is cut (Prometheus asks again). */
export function metricsListenerCloseables(server: http.Server | undefined, timeoutMs?: number): Closeable[] {
  if (!server) return [];
  const close = () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    return closed;
  };
  return [closeable('metrics_listener', close, timeoutMs)];
}
