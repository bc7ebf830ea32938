/**
 * Prometheus metrics of the seller middleware, on a registry the seller passes in (or a private one). Reusing
 * a registry for a second middleware instance reuses the same metric objects instead of failing.
 */
import { Counter, Histogram, Registry } from 'prom-client';

export type RequestOutcome =
  | 'free'
  | 'challenged'
  | 'invalid_header'
  | 'mismatch'
  | 'replay'
  | 'verify_rejected'
  | 'facilitator_unavailable'
  | 'facilitator_not_configured'
  | 'seller_misconfigured'
  | 'handler_failed'
  | 'settled'
  | 'settled_without_receipt'
  | 'settle_failed'
  | 'settlement_override_invalid'
  | 'local_only_accepted'
  | 'payment_id_refused'
  | 'payment_id_replayed'
  | 'payment_id_conflict'
  | 'payment_id_unavailable';

export type LedgerOutcome = 'sent' | 'duplicate' | 'rejected' | 'failed' | 'dropped' | 'invalid';

export interface X402MiddlewareMetrics {
  registry: Registry;
  requests: Counter<'outcome'>;
  facilitatorSeconds: Histogram<'op'>;
  ledgerReports: Counter<'outcome'>;
}

function reuse<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

export function createX402MiddlewareMetrics(registry: Registry = new Registry()): X402MiddlewareMetrics {
  return {
    registry,
    requests: reuse(
      registry,
      'treasury_x402_middleware_requests_total',
      () =>
        new Counter({
          name: 'treasury_x402_middleware_requests_total',
          help: 'Requests seen by the x402 seller middleware, by outcome.',
          labelNames: ['outcome'] as const,
          registers: [registry],
        }),
    ),
    facilitatorSeconds: reuse(
      registry,
      'treasury_x402_middleware_facilitator_seconds',
      () =>
        new Histogram({
          name: 'treasury_x402_middleware_facilitator_seconds',
          help: 'Facilitator call latency, by operation (verify, settle).',
          labelNames: ['op'] as const,
          buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers: [registry],
        }),
    ),
    ledgerReports: reuse(
      registry,
      'treasury_x402_middleware_ledger_reports_total',
      () =>
        new Counter({
          name: 'treasury_x402_middleware_ledger_reports_total',
          help: 'Ledger reports to the platform, by outcome.',
          labelNames: ['outcome'] as const,
          registers: [registry],
        }),
    ),
  };
}
