/** Prometheus metrics of treasury-signer (`treasury_signer_*`), served on loopback when a port is set. */
import http from 'node:http';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createSignerMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'treasury_signer_' });
  const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
  return {
    registry,
    requests: new Counter({ name: 'treasury_signer_requests_total', help: 'Signer requests by method and outcome.', labelNames: ['method', 'outcome'] as const, registers: [registry] }),
    duration: new Histogram({ name: 'treasury_signer_request_duration_seconds', help: 'Signer request latency by method.', labelNames: ['method'] as const, buckets, registers: [registry] }),
    hsm: new Histogram({ name: 'treasury_signer_hsm_operation_duration_seconds', help: 'HSM operation latency by operation.', labelNames: ['op'] as const, buckets, registers: [registry] }),
    cacheHits: new Counter({ name: 'treasury_signer_key_cache_hits_total', help: 'Unwrapped-key cache hits.', registers: [registry] }),
    cacheMisses: new Counter({ name: 'treasury_signer_key_cache_misses_total', help: 'Unwrapped-key cache misses (an unwrap in the HSM).', registers: [registry] }),
    frameErrors: new Counter({ name: 'treasury_signer_frame_errors_total', help: 'Refused frames by error code.', labelNames: ['code'] as const, registers: [registry] }),
  };
}

export type SignerMetrics = ReturnType<typeof createSignerMetrics>;

export function serveSignerMetrics(metrics: SignerMetrics, port: number): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': metrics.registry.contentType });
    res.end(await metrics.registry.metrics());
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}
