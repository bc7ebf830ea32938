/**
 * Where treasury-api serves Prometheus `GET /metrics`: its environment variables, part of the API's one
 * configuration schema (./app-config.ts spreads them in), the `metricsListener` field of `AppConfig` they become,
 * and the production-mode rule about them (./production-mode.ts asks `metricsListenerRefusal`).
 * - TREASURY_METRICS_PORT set: /metrics is served only on a listener of its own, on TREASURY_METRICS_HOST
 *   (127.0.0.1 unless set), and the API's own listener answers it 404 like any path it does not serve;
 * - unset: /metrics is served on the API's own listener, as before — which production mode refuses unless
 *   TREASURY_METRICS_ON_PUBLIC_LISTENER=1 says a proxy in front keeps the path from the public (compose's does);
 * - both set: refused, the two say opposite things.
 *
 * Defends: the per-route counts, outcomes and pool sizes of every tenant readable by anyone who reaches the API's
 * port, in a production process nobody decided that for. Does not defend: who reaches the metrics listener itself
 * (no authentication; bind it to loopback or a private network).
 */
import { z } from 'zod';
import { ConfigError } from '../../../base/config-error.js';

export const metricsEnvShape = {
  /** A listener of its own for GET /metrics; set, the API's own listener answers /metrics 404. */
  TREASURY_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** The address the metrics listener binds (with TREASURY_METRICS_PORT). */
  TREASURY_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** 1: /metrics on the API's own listener in production mode (a proxy in front keeps it from the public). */
  TREASURY_METRICS_ON_PUBLIC_LISTENER: z.enum(['0', '1']).default('0'),
};

type MetricsListenerEnv = z.infer<z.ZodObject<typeof metricsEnvShape>>;

/** TREASURY_METRICS_PORT/_HOST: the metrics listener's address; undefined: /metrics on the API's own listener. */
export type MetricsListenerConfig = Readonly<{ host: string; port: number }> | undefined;

export function metricsListenerOf(e: MetricsListenerEnv): MetricsListenerConfig {
  if (e.TREASURY_METRICS_PORT === undefined) return undefined;
  if (e.TREASURY_METRICS_ON_PUBLIC_LISTENER === '1')
    throw new ConfigError(
      'api',
      'TREASURY_METRICS_ON_PUBLIC_LISTENER: is 1 while TREASURY_METRICS_PORT gives /metrics a listener of its own; unset one of them',
    );
  return Object.freeze({ host: e.TREASURY_METRICS_HOST, port: e.TREASURY_METRICS_PORT });
}

/**
 * Production mode's rule: /metrics on a listener of its own, or the operator's explicit word that the API's own
 * listener may serve it. Returns the refusal's setting and reason, or undefined.
 */
export function metricsListenerRefusal(
  env: Readonly<Record<string, string | undefined>>,
): { setting: string; reason: string } | undefined {
  const set = (name: string) => env[name] !== undefined && env[name] !== '';
  if (set('TREASURY_METRICS_PORT') || env.TREASURY_METRICS_ON_PUBLIC_LISTENER === '1') return undefined;
  return {
    setting: 'TREASURY_METRICS_PORT',
    reason:
      "is not set: production serves /metrics on a listener of its own (TREASURY_METRICS_PORT, on TREASURY_METRICS_HOST, 127.0.0.1 by default), or on the API's own listener only with TREASURY_METRICS_ON_PUBLIC_LISTENER=1 when a proxy in front keeps /metrics from the public",
  };
}
