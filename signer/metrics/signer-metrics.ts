/**
 * Prometheus metrics of treasury-signer (`treasury_signer_*`, seconds and `_total`), served as
 * `/metrics` on 127.0.0.1 only when TREASURY_SIGNER_METRICS_PORT is set.
 *
 * Protects against: flying blind — refused requests are counted by outcome (the error code), HSM time
 * by operation, cache efficiency by hits/misses, refusals by the signer's own limits by limit name, and
 * for AWS KMS every request's duration, every throttle, retry and final failure (`treasury_signer_kms_*`), and
 * the connections the signer closed itself by reason. Labels are fixed enums: no key refs, addresses or ids.
 * Known limits: loopback only, no authentication; anything else on the host can read the counters.
 */
import http from 'node:http';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createSignerMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'treasury_signer_' });
  const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
  return {
    registry,
    ...ownerPolicyMetrics(registry),
    ...connectionMetrics(registry),
    requests: new Counter({
      name: 'treasury_signer_requests_total',
      help: 'Signer requests by method and outcome (ok or the error code); method "none" for frames refused before a method was known.',
      labelNames: ['method', 'outcome'] as const,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'treasury_signer_request_duration_seconds',
      help: 'Signer request latency by method.',
      labelNames: ['method'] as const,
      buckets,
      registers: [registry],
    }),
    hsm: new Histogram({
      name: 'treasury_signer_hsm_operation_duration_seconds',
      help: 'HSM operation latency by operation.',
      labelNames: ['op'] as const,
      buckets,
      registers: [registry],
    }),
    signatures: new Counter({
      name: 'treasury_signer_signatures_total',
      help: 'Signatures made by the HSM, by thread: "inline" on the main thread (no other request waiting), "pool" on a libuv thread.',
      labelNames: ['thread'] as const,
      registers: [registry],
    }),
    limitRefusals: new Counter({
      name: 'treasury_signer_limit_refusals_total',
      help: "Signatures refused by the signer's own limits, by limit: per_signature (TREASURY_SIGNER_MAX_PER_SIGNATURE) or a rolling per-wallet ceiling (wallet_amount_hour, wallet_amount_day, wallet_signatures_minute, wallet_signatures_hour, wallet_receipts_minute, wallet_receipts_hour).",
      labelNames: ['limit'] as const,
      registers: [registry],
    }),
    kmsDuration: new Histogram({
      name: 'treasury_signer_kms_request_duration_seconds',
      help: 'AWS KMS requests (each attempt) by operation and outcome (ok, or the failure reason: throttled, server_error, timeout, unreachable, not_found, …).',
      labelNames: ['op', 'outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    kmsThrottles: new Counter({
      name: 'treasury_signer_kms_throttles_total',
      help: 'AWS KMS requests answered with throttling, by operation.',
      labelNames: ['op'] as const,
      registers: [registry],
    }),
    kmsRetries: new Counter({
      name: 'treasury_signer_kms_retries_total',
      help: 'AWS KMS requests sent again after a retryable failure, by operation and reason (throttled, server_error, timeout, connection_lost).',
      labelNames: ['op', 'reason'] as const,
      registers: [registry],
    }),
    kmsFailures: new Counter({
      name: 'treasury_signer_kms_failures_total',
      help: 'AWS KMS operations that failed for good (after any retries), by operation and reason (deadline, maybe_executed, unreachable, access_denied, not_found, …).',
      labelNames: ['op', 'reason'] as const,
      registers: [registry],
    }),
    cacheHits: new Counter({
      name: 'treasury_signer_key_cache_hits_total',
      help: 'Unwrapped-key handle cache hits.',
      registers: [registry],
    }),
    cacheMisses: new Counter({
      name: 'treasury_signer_key_cache_misses_total',
      help: 'Unwrapped-key handle cache misses (an unwrap in the HSM).',
      registers: [registry],
    }),
  };
}

/** The owner-signed policies' counters (../owner-policy/): which payments were checked against one, and refusals. */
function ownerPolicyMetrics(registry: Registry) {
  return {
    policyStates: new Counter({
      name: 'treasury_signer_payment_policy_checks_total',
      help: "Payment signatures the signer checked against its policy store, by the wallet's state: owner_signed (its owner-signed policy evaluated) or ceilings_only (no signed policy yet: only the signer's own ceilings apply).",
      labelNames: ['policy'] as const,
      registers: [registry],
    }),
    spendStates: new Counter({
      name: 'treasury_signer_spend_states_total',
      help: "Signed wallets' spend states the signer's payment decisions were made on, by source: remembered (this process's last commit left it; one round trip to the store instead of two) or read (from the store); velocity_read_on: remembered, with the velocity window read on once the spend times it knew had all left it (counted under remembered too).",
      labelNames: ['source'] as const,
      registers: [registry],
    }),
    earlySignatures: new Counter({
      name: 'treasury_signer_early_signatures_total',
      help: "Payment signatures made while their spend committed in the signer's store (foreseen allowed on this process's remembered state), by outcome: released (after the commit) or discarded (the commit refused or failed: another signer process spent from the wallet meanwhile, or the store failed). Never released before the commit.",
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    policyRefusals: new Counter({
      name: 'treasury_signer_policy_refusals_total',
      help: "Payment signatures the signer refused because the wallet's owner-signed policy forbids them, by the first violated rule.",
      labelNames: ['rule'] as const,
      registers: [registry],
    }),
  };
}

/** The socket's own counters (../server/signer-server.ts): connections it closed, and why. */
function connectionMetrics(registry: Registry) {
  return {
    connectionsClosed: new Counter({
      name: 'treasury_signer_connections_closed_total',
      help: 'Socket connections the signer closed itself, by reason: frame_too_large (a frame over the limit was announced), unread_replies (its peer left more than 8 MiB of replies unread), idle_timeout (no traffic for TREASURY_SIGNER_IDLE_TIMEOUT_SECONDS).',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
  };
}

export type SignerMetrics = ReturnType<typeof createSignerMetrics>;

export function serveSignerMetrics(metrics: SignerMetrics, port: number): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    metrics.registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
