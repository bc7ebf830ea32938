/**
 * Prometheus metrics of the gate, on its own registry (served at the gate's `/metrics`): the paywall's own
 * (`treasury_x402_middleware_*`, the same names as the Koa middleware's, so one dashboard reads both), the
 * origin exchanges by outcome and the catalogue reads by outcome.
 */
import { Registry, type Counter } from 'prom-client';
import { metricMakers } from '../shared/metric-makers.js';
import { createX402MiddlewareMetrics, type X402MiddlewareMetrics } from '../x402/seller/middleware-metrics.js';

export type OriginOutcome =
  | 'answered'
  | 'answered_client_closed'
  | 'failed_status'
  | 'unreachable'
  | 'refused'
  | 'timeout'
  | 'client_closed'
  | 'passed';

export interface GateMetrics {
  registry: Registry;
  paywall: X402MiddlewareMetrics;
  origin: Counter<'outcome'>;
  catalogueReads: Counter<'outcome'>;
}

export function createGateMetrics(registry: Registry = new Registry()): GateMetrics {
  const { counter } = metricMakers(registry);
  return {
    registry,
    paywall: createX402MiddlewareMetrics(registry),
    origin: counter({
      name: 'treasury_gate_origin_requests_total',
      help: "Requests the gate sent to sellers' origins, by outcome.",
      labelNames: ['outcome'],
    }),
    catalogueReads: counter({
      name: 'treasury_gate_catalogue_reads_total',
      help: 'Catalogue reads from the platform, by outcome (ok, failed).',
      labelNames: ['outcome'],
    }),
  };
}
