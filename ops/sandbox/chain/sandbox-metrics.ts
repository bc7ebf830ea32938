/**
 * Prometheus metrics of the sandbox's faucet and facilitator (`treasury_sandbox_*`, seconds and
 * `_total`). Metrics are registered on the registry passed in, or on a fresh one; an existing metric of
 * the same name on that registry is reused, so several faucet/facilitator instances (tests) can share a
 * registry without "already registered" errors. Never the global default registry.
 */
import { Registry } from 'prom-client';
import { metricMakers } from '../../../src/shared/metric-makers.js';

export function createFaucetMetrics(registry: Registry = new Registry()) {
  const { counter } = metricMakers(registry, { reuseExisting: true });
  return {
    registry,
    mints: counter({
      name: 'treasury_sandbox_faucet_mints_total',
      help: 'Faucet requests by outcome (minted, invalid_request, wrong_chain, error).',
      labelNames: ['outcome'],
    }),
    permit2Approvals: counter({
      name: 'treasury_sandbox_faucet_permit2_approvals_total',
      help: 'Permit2 approvals the faucet sent on behalf of funded addresses, by outcome (approved, error).',
      labelNames: ['outcome'],
    }),
  };
}

export function createFacilitatorMetrics(registry: Registry = new Registry()) {
  const { counter, histogram } = metricMakers(registry, { reuseExisting: true });
  return {
    registry,
    requests: counter({
      name: 'treasury_sandbox_facilitator_requests_total',
      help: 'Local facilitator requests by route (verify, settle, supported) and outcome (valid, invalid, success, failure, bad_request, error, ok).',
      labelNames: ['route', 'outcome'],
    }),
    duration: histogram({
      name: 'treasury_sandbox_facilitator_request_seconds',
      help: 'Local facilitator request latency by route.',
      labelNames: ['route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
  };
}

export type FaucetMetrics = ReturnType<typeof createFaucetMetrics>;
export type FacilitatorMetrics = ReturnType<typeof createFacilitatorMetrics>;
