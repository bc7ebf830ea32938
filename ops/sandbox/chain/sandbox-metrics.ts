/**
 * Prometheus metrics of the sandbox's faucet and facilitator (`treasury_sandbox_*`, seconds and
 * `_total`). Metrics are registered on the registry passed in, or on a fresh one; an existing metric of
 * the same name on that registry is reused, so several faucet/facilitator instances (tests) can share a
 * registry without "already registered" errors. Never the global default registry.
 */
import { Counter, Histogram, Registry } from 'prom-client';

function counter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

function histogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: number[],
): Histogram<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Histogram<L>;
  return new Histogram({ name, help, labelNames, buckets, registers: [registry] });
}

export function createFaucetMetrics(registry: Registry = new Registry()) {
  return {
    registry,
    mints: counter(
      registry,
      'treasury_sandbox_faucet_mints_total',
      'Faucet requests by outcome (minted, invalid_request, wrong_chain, error).',
      ['outcome'] as const,
    ),
    permit2Approvals: counter(
      registry,
      'treasury_sandbox_faucet_permit2_approvals_total',
      'Permit2 approvals the faucet sent on behalf of funded addresses, by outcome (approved, error).',
      ['outcome'] as const,
    ),
  };
}

export function createFacilitatorMetrics(registry: Registry = new Registry()) {
  return {
    registry,
    requests: counter(
      registry,
      'treasury_sandbox_facilitator_requests_total',
      'Local facilitator requests by route (verify, settle, supported) and outcome (valid, invalid, success, failure, bad_request, error, ok).',
      ['route', 'outcome'] as const,
    ),
    duration: histogram(
      registry,
      'treasury_sandbox_facilitator_request_seconds',
      'Local facilitator request latency by route.',
      ['route'] as const,
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ),
  };
}

export type FaucetMetrics = ReturnType<typeof createFaucetMetrics>;
export type FacilitatorMetrics = ReturnType<typeof createFacilitatorMetrics>;
