/**
 * Configuration of the gate (docs/gate.md), parsed once from the environment with zod into a frozen object.
 * Nothing else in src/gate/ reads process.env; the paywall's own switches (XX_ALLOW_LOCAL_ONLY,
 * XX_DISABLE_BODY_CAPTURE) are passed on from here as its `env`.
 *
 * Defends against: a gate starting with a bearer that is not a PAT, a platform or facilitator URL that is not
 * http(s) or carries credentials, limits out of range, private origins reached without the operator asking, the
 * sandbox's switches in production mode, and there a platform or facilitator URL in plain http to another host
 * (the PAT in clear, a facilitator's answer forged on the path) and `/metrics` on the gate's public listener
 * (every seller's counts to whoever reaches the gate) without the operator saying a proxy keeps it from the public.
 * Does not defend against: a bearer without the gate scope (the platform refuses it at the first catalogue
 * load, and the gate stays not ready).
 */
import { z } from 'zod';
import { ConfigError } from '../../base/config-error.js';
import { envInt } from '../shared/env-int.js';
import { canonicalGateUrl, gateBaseDomainSchema, gateBaseUrlSchema } from '../shared/gate-address-schema.js';
import { isPlainHttpOffHost } from '../shared/plain-http-upstream.js';

const port = z.coerce.number().int().min(0).max(65_535);
const httpUrl = z
  .string()
  .url()
  .refine((v) => /^https?:\/\//.test(v), 'must be an http(s) URL')
  .refine((v) => {
    const u = new URL(v);
    return u.username === '' && u.password === '';
  }, 'must not carry credentials')
  .transform((v) => v.replace(/\/+$/, ''));

const envSchema = z.object({
  GATE_HOST: z.string().min(1).default('127.0.0.1'),
  GATE_PORT: port.default(8404),
  /**
   * A listener of its own for GET /metrics (on GATE_METRICS_HOST); set, the gate's listener answers /metrics as
   * any unknown path. Unset: /metrics on the gate's listener, which production mode refuses unless
   * GATE_METRICS_ON_PUBLIC_LISTENER=1 (a proxy in front keeps the path from the public).
   */
  GATE_METRICS_PORT: port.optional(),
  GATE_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  GATE_METRICS_ON_PUBLIC_LISTENER: z.enum(['0', '1']).default('0'),
  /** The gate bearer: a PAT carrying the gate scope (alone, or beside a Treasury scope). */
  GATE_TOKEN: z
    .string()
    .regex(/^xx_pat_[A-Za-z0-9_-]{16,256}$/, 'GATE_TOKEN must be a PAT (xx_pat_…) with the gate scope'),
  /** The platform (Treasury API) base URL. */
  GATE_API_URL: httpUrl.default('http://127.0.0.1:8402'),
  /** Facilitator base URL; absent → 503 on paid routes unless XX_ALLOW_LOCAL_ONLY=1 (as the middleware). */
  FACILITATOR_URL: httpUrl.optional(),
  /**
   * The Solana facilitator's base URL: sellers with a proven Solana pay-to address are also sold on Solana
   * (GATE_SOLANA_NETWORK), the fee payer read from its GET /supported. Unset: the gate sells on GATE_NETWORK only.
   */
  GATE_SOLANA_FACILITATOR_URL: httpUrl.optional(),
  /** CAIP-2 id of the Solana cluster the gate sells on (the ids @x402/svm accepts); default devnet. */
  GATE_SOLANA_NETWORK: z
    .enum(['solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1'])
    .default('solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1'),
  /** On-chain Permit2 caller; required when `upto` is among GATE_SCHEMES. */
  FACILITATOR_ADDRESS: z.string().optional(),
  GATE_SCHEMES: z
    .string()
    .default('exact')
    .transform((v) => v.split(',').map((s) => s.trim()))
    .pipe(z.array(z.enum(['exact', 'upto'])).min(1)),
  /** CAIP-2 network the gate's sellers are paid on. */
  GATE_NETWORK: z
    .string()
    .regex(/^eip155:[1-9][0-9]{0,15}$/)
    .default('eip155:84532'),
  /**
   * Host routing: a request whose Host is `<slug>.<GATE_BASE_DOMAIN>` goes to that seller, whole path kept.
   * Otherwise (and always when unset) the first path segment is the seller's slug: `/<slug>/rest` → `/rest`.
   * The shared schema (a lower-case DNS name of two labels or more, no IP literal): with GATE_PUBLIC_URL the gate
   * names it to the platform, which proves it (docs/gate.md#the-gates-public-address).
   */
  GATE_BASE_DOMAIN: gateBaseDomainSchema.optional(),
  /**
   * The gate's public base URL (scheme, host, optional port; https in production), proven to the platform so the
   * public catalogue lists the account's sellers at `<url>/<slug>` (docs/gate.md#the-gates-public-address).
   * Unset: the gate does not prove an address and its sellers are not listed.
   */
  GATE_PUBLIC_URL: gateBaseUrlSchema.optional(),
  /** How often the catalogue is read again (ms); a failed read keeps the last good catalogue. */
  GATE_REFRESH_MS: envInt(1_000, 3_600_000, 30_000),
  /** How often the hourly counts of what origins answered are reported to the platform (ms); 0: never. */
  GATE_UPTIME_REPORT_MS: envInt(0, 3_600_000, 60_000),
  /** How long the origin may take to answer, body included (ms); beyond it: 504, nothing settled. */
  GATE_ORIGIN_TIMEOUT_MS: envInt(100, 600_000, 30_000),
  /** Largest request body (read into memory, then proxied with its length); larger: 413 before any payment. */
  GATE_MAX_REQUEST_BYTES: envInt(0, 64 * 1024 * 1024, 1024 * 1024),
  /**
   * `1`: sellers' origins may resolve to loopback, private or other non-global addresses (a gate in front of
   * origins on its own network, the sandbox, tests). Default `0`: such an origin is refused (502).
   */
  GATE_ALLOW_PRIVATE_ORIGINS: z.enum(['0', '1']).default('0'),
  /** Largest response held in memory until settlement (larger streams are held unread; docs/gate.md). */
  GATE_MAX_HELD_BYTES: envInt(1, 1024 * 1024 * 1024, 8 * 1024 * 1024),
  /** Time-outs of the platform and facilitator calls (ms). */
  GATE_PLATFORM_TIMEOUT_MS: envInt(100, 60_000, 5_000),
  GATE_VERIFY_TIMEOUT_MS: envInt(100, 120_000, 10_000),
  GATE_SETTLE_TIMEOUT_MS: envInt(100, 300_000, 30_000),
  /** x402 `payment-identifier`: `1` declares the id required (a payment without one: 400). */
  GATE_PAYMENT_ID_REQUIRED: z.enum(['0', '1']).default('0'),
  /** Where ids and their answers are kept: `platform` (PostgreSQL, shared by every gate process) or `memory`. */
  GATE_PAYMENT_ID_STORE: z.enum(['platform', 'memory']).default('platform'),
  /** Largest answer body kept for a retry (larger: the receipt only, the retry gets 410); at most 256 KiB. */
  GATE_PAYMENT_ID_MAX_ANSWER_BYTES: envInt(0, 262_144, 65_536),
  GATE_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Started by the sandbox: stop when the parent process goes away. */
  TREASURY_EXIT_WITH_PARENT: z.enum(['0', '1']).default('0'),
  XX_ALLOW_LOCAL_ONLY: z.string().optional(),
  XX_DISABLE_BODY_CAPTURE: z.string().optional(),
});

export interface GateConfig {
  host: string;
  port: number;
  /** GATE_METRICS_PORT/_HOST: /metrics on a listener of its own; undefined: on the gate's listener. */
  metricsListener: Readonly<{ host: string; port: number }> | undefined;
  token: string;
  apiUrl: string;
  facilitatorUrl: string | undefined;
  facilitatorAddress: string | undefined;
  schemes: readonly ('exact' | 'upto')[];
  network: string;
  /** GATE_SOLANA_FACILITATOR_URL: the gate also sells on Solana when set. */
  solanaFacilitatorUrl: string | undefined;
  solanaNetwork: string;
  baseDomain: string | undefined;
  /**
   * GATE_PUBLIC_URL, canonical (no trailing `/`): the address the gate proves to the platform, and whose scheme
   * the 402 challenge's resource URL names (a TLS-terminating front: https, not the gate's own http).
   */
  publicUrl: string | undefined;
  refreshMs: number;
  /** GATE_UPTIME_REPORT_MS: how often uptime counts are reported (0: not recorded nor reported). */
  uptimeReportMs: number;
  originTimeoutMs: number;
  maxRequestBytes: number;
  maxHeldBytes: number;
  allowPrivateOrigins: boolean;
  platformTimeoutMs: number;
  verifyTimeoutMs: number;
  settleTimeoutMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  exitWithParent: boolean;
  /** x402 `payment-identifier` (docs/gate.md#payment-identifier). */
  paymentId: { required: boolean; store: 'platform' | 'memory'; maxAnswerBytes: number };
  /** What the paywall reads of the environment (local-only mode, body capture). */
  paywallEnv: Readonly<Record<string, string | undefined>>;
}

/** The shared configuration error (base/config-error.ts) with `details.process` = `gate`, every problem listed. */
export class GateConfigError extends ConfigError {
  override name = 'GateConfigError';

  constructor(problems: readonly string[]) {
    super('gate', problems);
  }
}

/**
 * What production mode refuses (as treasury-api does, src/api/config/production-mode.ts): a public URL that is
 * not https; an upstream (platform, facilitators) in plain http to another host (../shared/plain-http-upstream.ts:
 * the PAT goes to GATE_API_URL on every catalogue read, and a facilitator's isValid/success decides whether
 * content is served); and the sandbox's switches — paid routes answered with nothing verified or settled
 * (`XX_ALLOW_LOCAL_ONLY`), sellers' origins on private addresses (`GATE_ALLOW_PRIVATE_ORIGINS`: any seller could
 * then have the gate reach into its own network; the API verifies no such origin in production either).
 */
function productionProblems(e: z.infer<typeof envSchema>, publicUrl: string | undefined): string[] {
  const problems: string[] = [];
  if (publicUrl?.startsWith('http://')) problems.push('GATE_PUBLIC_URL: must be https in production mode');
  const upstreams = {
    GATE_API_URL: e.GATE_API_URL,
    FACILITATOR_URL: e.FACILITATOR_URL,
    GATE_SOLANA_FACILITATOR_URL: e.GATE_SOLANA_FACILITATOR_URL,
  };
  for (const [name, url] of Object.entries(upstreams))
    if (url !== undefined && isPlainHttpOffHost(url))
      problems.push(
        `${name}: must be https in production mode (http only to this machine: localhost, 127.0.0.0/8, ::1)`,
      );
  if (e.XX_ALLOW_LOCAL_ONLY !== undefined && e.XX_ALLOW_LOCAL_ONLY !== '' && e.XX_ALLOW_LOCAL_ONLY !== '0')
    problems.push('XX_ALLOW_LOCAL_ONLY: is a sandbox-only switch; unset it in production mode');
  if (e.GATE_ALLOW_PRIVATE_ORIGINS === '1')
    problems.push('GATE_ALLOW_PRIVATE_ORIGINS: is a sandbox-only switch; unset it in production mode');
  if (e.GATE_METRICS_PORT === undefined && e.GATE_METRICS_ON_PUBLIC_LISTENER !== '1')
    problems.push(
      "GATE_METRICS_PORT: is not set: production serves /metrics on a listener of its own (GATE_METRICS_PORT, on GATE_METRICS_HOST, 127.0.0.1 by default), or on the gate's listener only with GATE_METRICS_ON_PUBLIC_LISTENER=1 when a proxy in front keeps /metrics from the public",
    );
  return problems;
}

/** GATE_METRICS_PORT and GATE_METRICS_ON_PUBLIC_LISTENER=1 say opposite things: refused in every mode. */
function metricsListenerOf(e: z.infer<typeof envSchema>): GateConfig['metricsListener'] {
  if (e.GATE_METRICS_PORT === undefined) return undefined;
  if (e.GATE_METRICS_ON_PUBLIC_LISTENER === '1')
    throw new GateConfigError([
      'GATE_METRICS_ON_PUBLIC_LISTENER: is 1 while GATE_METRICS_PORT gives /metrics a listener of its own; unset one of them',
    ]);
  return Object.freeze({ host: e.GATE_METRICS_HOST, port: e.GATE_METRICS_PORT });
}

/** The gate's variables, for the generated configuration reference (docs/configuration.md). */
export { envSchema as gateEnvSchema };

/** Parses the environment once; throws one `GateConfigError` listing every problem (never the token's value). */
export function loadGateConfig(env: Readonly<Record<string, string | undefined>> = process.env): GateConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success)
    throw new GateConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || 'env'}: ${i.message}`));
  const e = parsed.data;
  const publicUrl = e.GATE_PUBLIC_URL === undefined ? undefined : canonicalGateUrl(e.GATE_PUBLIC_URL);
  const production = env.NODE_ENV === 'production' || env.TREASURY_ENV === 'production';
  if (production) {
    const refused = productionProblems(e, publicUrl);
    if (refused.length > 0) throw new GateConfigError(refused);
  }
  return Object.freeze({
    host: e.GATE_HOST,
    port: e.GATE_PORT,
    metricsListener: metricsListenerOf(e),
    token: e.GATE_TOKEN,
    apiUrl: e.GATE_API_URL,
    facilitatorUrl: e.FACILITATOR_URL,
    facilitatorAddress: e.FACILITATOR_ADDRESS,
    schemes: Object.freeze([...new Set(e.GATE_SCHEMES)]),
    network: e.GATE_NETWORK,
    solanaFacilitatorUrl: e.GATE_SOLANA_FACILITATOR_URL,
    solanaNetwork: e.GATE_SOLANA_NETWORK,
    baseDomain: e.GATE_BASE_DOMAIN,
    publicUrl,
    refreshMs: e.GATE_REFRESH_MS,
    uptimeReportMs: e.GATE_UPTIME_REPORT_MS,
    originTimeoutMs: e.GATE_ORIGIN_TIMEOUT_MS,
    maxRequestBytes: e.GATE_MAX_REQUEST_BYTES,
    maxHeldBytes: e.GATE_MAX_HELD_BYTES,
    allowPrivateOrigins: e.GATE_ALLOW_PRIVATE_ORIGINS === '1',
    platformTimeoutMs: e.GATE_PLATFORM_TIMEOUT_MS,
    verifyTimeoutMs: e.GATE_VERIFY_TIMEOUT_MS,
    settleTimeoutMs: e.GATE_SETTLE_TIMEOUT_MS,
    logLevel: e.GATE_LOG_LEVEL,
    paymentId: Object.freeze({
      required: e.GATE_PAYMENT_ID_REQUIRED === '1',
      store: e.GATE_PAYMENT_ID_STORE,
      maxAnswerBytes: e.GATE_PAYMENT_ID_MAX_ANSWER_BYTES,
    }),
    exitWithParent: e.TREASURY_EXIT_WITH_PARENT === '1',
    paywallEnv: Object.freeze({
      XX_ALLOW_LOCAL_ONLY: e.XX_ALLOW_LOCAL_ONLY,
      XX_DISABLE_BODY_CAPTURE: e.XX_DISABLE_BODY_CAPTURE,
    }),
  });
}
