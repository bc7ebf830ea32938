/**
 * Configuration of treasury-api, parsed once from the environment with zod into a frozen object.
 * Nothing else in src/ reads process.env.
 */
import path from 'node:path';
import { z } from 'zod';
import { envInt } from '../../shared/env-int.js';
import { MAX_AMOUNT_MICRO } from '../../shared/amount-bounds.js';
import { canonicalUsd, isUsdString, parseUsd } from '../../../policy/money.js';
import { usdAmountSchema } from '../../../policy/policy-schema.js';
import { parseTrustedProxies, type TrustedProxy } from '../net/client-address-key.js';
import { ConfigError } from '../../../base/config-error.js';
import { isLoopbackUrl } from '../net/loopback-url.js';
import { readTls } from './read-tls.js';
import { rateLimitConfigOf, rateLimitEnvShape, type RateLimitConfig } from './rate-limit-config.js';
import { boundsConfigOf, boundsEnvShape, type BoundsConfig } from './bounds-config.js';
import { metricsEnvShape, metricsListenerOf, type MetricsListenerConfig } from './metrics-listener-config.js';

const port = z.coerce.number().int().min(1).max(65535);
/** An http URL on this machine (127.0.0.0/8, [::1], localhost): the sandbox's own services. */
const loopbackHttpUrl = z
  .url({ protocol: /^http$/ })
  .max(2048)
  .refine((u) => isLoopbackUrl(u), 'a loopback http URL (the sandbox runs on this machine)');
/** A positive USD amount such as "10" or "0.5", at most the largest amount the API handles. */
const envUsd = (fallback: string) =>
  usdAmountSchema.refine((v) => parseUsd(v) <= MAX_AMOUNT_MICRO, 'too large').default(fallback);

const envSchema = z.object({
  TREASURY_HOST: z.string().default('127.0.0.1'),
  TREASURY_PORT: port.default(8402),
  ...metricsEnvShape,
  DATABASE_URL: z.string().url().optional(),
  TREASURY_DATA_DIR: z.string().default('.treasury'),
  TREASURY_EMBEDDED_PG_PORT: port.default(54329),
  TREASURY_SIGNER_SOCKET: z.string().optional(),
  TREASURY_SIGNER_TIMEOUT_MS: envInt(100, 120_000, 10_000),
  TREASURY_ADMIN_TOKEN: z.string().min(24, 'TREASURY_ADMIN_TOKEN must be at least 24 characters').optional(),
  TREASURY_BODY_LIMIT_BYTES: envInt(1024, 16 * 1024 * 1024, 1024 * 1024),
  /** A JSON body nesting deeper, or holding more object keys in all, answers 400 `body_too_complex` before it is parsed. */
  TREASURY_JSON_MAX_DEPTH: envInt(8, 1_000, 32),
  TREASURY_JSON_MAX_KEYS: envInt(256, 1_000_000, 5_000),
  /**
   * Tenant isolation bounds (docs/security-model.md, Tenant isolation bounds): active wallets (each an HSM or
   * KMS key) per agent, and per account over all its agents and its own wallets; past either, 409 `wallet_limit_reached`.
   */
  TREASURY_MAX_WALLETS_PER_AGENT: envInt(1, 100_000, 25),
  TREASURY_MAX_WALLETS_PER_ACCOUNT: envInt(1, 1_000_000, 500),
  /** Live PATs per account (each a rate-limit bucket); past it 409 `pat_limit_reached` (src/api/platform/pat-bounds.ts). */
  TREASURY_MAX_PATS_PER_ACCOUNT: envInt(1, 100_000, 1_000),
  /**
   * The policy of a wallet an agent bearer creates: its daily cap is the agent PAT's daily cap, or this with
   * no PAT cap; its per-payment cap the smaller of that and TREASURY_AGENT_WALLET_PER_TX_CAP_USD.
   */
  TREASURY_AGENT_WALLET_DAILY_CAP_USD: envUsd('10'),
  TREASURY_AGENT_WALLET_PER_TX_CAP_USD: envUsd('1'),
  TREASURY_DB_POOL_MAX: envInt(1, 200, 20),
  /**
   * How long a pooled connection may stay idle before it is closed (ms). Opening one costs a payment 8–10 ms
   * (TCP, SCRAM, its statements prepared and planned again: docs/performance.md, "Idle pooled connections"), so
   * a service paid every few minutes keeps its connections instead of opening one for most payments.
   */
  TREASURY_DB_POOL_IDLE_MS: envInt(1_000, 86_400_000, 300_000),
  /** Server-side limits on the API's database sessions (ms; 0 = none): a statement, a lock wait, a transaction left idle. */
  TREASURY_DB_STATEMENT_TIMEOUT_MS: envInt(0, 600_000, 10_000),
  TREASURY_DB_LOCK_TIMEOUT_MS: envInt(0, 600_000, 5_000),
  TREASURY_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: envInt(0, 3_600_000, 60_000),
  TREASURY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Extra chains, JSON: [{"name":"local","network":"eip155:31337","usdc":"0x…","usdc_name":"USDC","usdc_version":"2"}] */
  TREASURY_EXTRA_CHAINS: z.string().optional(),
  TREASURY_DEFAULT_CHAIN: z.string().default('base-sepolia'),
  /** JSON-RPC endpoints per CAIP-2 network for on-chain reads, JSON: {"eip155:84532":"http://127.0.0.1:8545"}; public Base endpoints by default. */
  TREASURY_RPC_URLS: z.string().optional(),
  /** Solana JSON-RPC endpoint (balances, latest blockhash); the Solana chains are served only when it is set. */
  TREASURY_SOLANA_RPC_URL: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional(),
  /**
   * How long a Solana blockhash read is reused for the messages of later payments (ms; 0: a read per payment).
   * A blockhash lets a transaction land for a minute or more; a reused one costs a message that much of it.
   */
  TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS: envInt(0, 20_000, 2_000),
  /** The sandbox's EVM faucet (`npm start` sets it; loopback only; refused in production): GET /v1/sandbox/faucets names it. */
  TREASURY_SANDBOX_FAUCET_URL: loopbackHttpUrl.optional(),
  /** The sandbox's Solana faucet, as TREASURY_SANDBOX_FAUCET_URL. */
  TREASURY_SANDBOX_SOLANA_FAUCET_URL: loopbackHttpUrl.optional(),
  /** How long a bearer lookup is cached (ms; 0 disables). Revocations through another replica take up to this long there. */
  TREASURY_AUTH_CACHE_MS: envInt(0, 10_000, 1_000),
  /** How long a public catalogue answer (GET /discovery/*) is reused for the same query (ms; 0 disables). */
  TREASURY_DISCOVERY_CACHE_MS: envInt(0, 60_000, 10_000),
  TREASURY_RPC_TIMEOUT_MS: envInt(100, 60_000, 3_000),
  /**
   * Blocks a transaction must have (its own included) before a ledger row counts or an upto settlement gives
   * spend back, per CAIP-2 network, JSON: {"eip155:8453":10}. Base mainnet defaults to 10, every other network to 1.
   */
  TREASURY_LEDGER_CONFIRMATIONS: z.string().optional(),
  /** How often the ledger verifier looks for pending rows (ms); 0 stops the background verifier in this process. */
  TREASURY_LEDGER_VERIFY_INTERVAL_MS: envInt(0, 3_600_000, 2_000),
  /** Ledger rows checked on chain at once by one process. */
  TREASURY_LEDGER_VERIFY_CONCURRENCY: envInt(1, 64, 4),
  /** How long a reported transaction the RPC does not know stays pending before it is rejected (s). */
  TREASURY_LEDGER_NOT_FOUND_GRACE_SECONDS: envInt(0, 7 * 86_400, 900),
  /** The verifier's share, the seller bounds, the pay path's snapshot memory and the rejected rows' retention. */
  ...boundsEnvShape,
  /** Rows of one seller, created in the last 24 h, that may end rejected; past it new reports are refused (429). */
  TREASURY_LEDGER_MAX_REJECTED_PER_SELLER: envInt(1, 10_000_000, 20_000),
  /** Endpoints one seller may hold (created by hand or from its OpenAPI document). */
  TREASURY_SELLER_MAX_ENDPOINTS: envInt(1, 100_000, 1_000),
  /**
   * Sellers one account may register (suspended ones too: a seller is never deleted). Each platform_mor seller
   * gets a collection wallet (an HSM or KMS key) per network collected on, so this bounds a tenant's keys there.
   */
  TREASURY_MAX_SELLERS_PER_ACCOUNT: envInt(1, 100_000, 100),
  /** Facilitator that submits the platform's payouts to platform_mor sellers on chain; none: payouts wait. */
  TREASURY_FACILITATOR_URL: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * CAIP-2 networks the platform collects on for platform_mor sellers, comma-separated; by default the default
   * chain's network and every network with an RPC endpoint in TREASURY_RPC_URLS.
   */
  TREASURY_MOR_NETWORKS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      const networks = v.split(',').map((n) => n.trim());
      if (networks.length > 32 || networks.some((n) => !/^eip155:[1-9][0-9]{0,15}$/.test(n))) {
        ctx.addIssue({ code: 'custom', message: 'expected comma-separated CAIP-2 networks, e.g. eip155:8453' });
        return z.NEVER;
      }
      return Object.freeze([...new Set(networks)]);
    }),
  /** The largest single payout to a platform_mor seller (USD); what is owed beyond it is paid by later flushes. */
  TREASURY_MOR_PAYOUT_MAX_USD: z
    .string()
    .default('100')
    .refine((v) => isUsdString(v) && parseUsd(v) > 0n && parseUsd(v) <= MAX_AMOUNT_MICRO, {
      message: 'expected a positive USD amount of at most 1000000000, e.g. 100',
    }),
  TREASURY_EXIT_WITH_PARENT: z.enum(['0', '1']).default('0'),
  /** The origin clients reach us at; SIWE/SIWS messages must name its host as domain and its origin in URI. */
  TREASURY_PUBLIC_URL: z.string().url().optional(),
  /** Where the dashboard lives (settings links in recovery blocks); defaults to the API's own /dashboard. */
  TREASURY_DASHBOARD_URL: z.string().url().optional(),
  /** Let origin verification reach loopback/private addresses (local sandbox and tests only). */
  TREASURY_VERIFY_ALLOW_PRIVATE: z.enum(['0', '1']).default('0'),
  /**
   * Ports the API may reach tenant-supplied URLs on (origin verification, OpenAPI ingest), comma-separated;
   * 80 and 443 by default. TREASURY_VERIFY_ALLOW_PRIVATE also lets non-global addresses through on any port.
   */
  TREASURY_OUTBOUND_ALLOWED_PORTS: z
    .string()
    .default('80,443')
    .transform((v, ctx) => {
      const ports = v.split(',').map((p) => p.trim());
      if (ports.some((p) => !/^[1-9][0-9]{0,4}$/.test(p) || Number(p) > 65535)) {
        ctx.addIssue({ code: 'custom', message: 'expected comma-separated ports 1-65535, e.g. 80,443' });
        return z.NEVER;
      }
      return Object.freeze([...new Set(ports.map(Number))]);
    }),
  TREASURY_SESSION_TTL_SECONDS: envInt(60, 30 * 86_400, 86_400),
  ...rateLimitEnvShape,
  /**
   * Proxies whose X-Forwarded-For is believed, comma-separated addresses or CIDR ranges (e.g.
   * `10.0.0.0/8, ::1`); empty: the client address is the TCP peer's.
   */
  TREASURY_TRUSTED_PROXIES: z.string().default(''),
  /** `production` turns on production mode (./production-mode.ts), as NODE_ENV=production does. */
  TREASURY_ENV: z.string().optional(),
  NODE_ENV: z.string().optional(),
  /** PEM certificate chain and private key: the API serves HTTPS itself (both or neither). */
  TREASURY_TLS_CERT_FILE: z.string().min(1).optional(),
  TREASURY_TLS_KEY_FILE: z.string().min(1).optional(),
  /** 1: a proxy in front terminates TLS (production mode then accepts plain HTTP behind it). */
  TREASURY_BEHIND_TLS_PROXY: z.enum(['0', '1']).default('0'),
});

/** The API's environment schema: docs/configuration.md is generated from it (ops/docs/configuration-reference.ts). */
export { envSchema as appEnvSchema };

/**
 * Limits PostgreSQL enforces on every session of a pool, in ms (0: none), set when the session starts.
 * A statement running longer, or waiting longer for a lock, is cancelled (its transaction rolls back, the
 * session stays usable); a session left idle inside a transaction is ended (its locks released).
 */
export interface SessionLimits {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

export type AppConfig = Readonly<{
  host: string;
  port: number;
  metricsListener: MetricsListenerConfig;
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPgPort: number;
  signerSocket: string;
  signerTimeoutMs: number;
  adminToken: string | undefined;
  bodyLimitBytes: number;
  /** Bounds of a JSON body, checked before it is parsed (src/api/http/middleware/json-shape-scan.ts). */
  jsonLimits: Readonly<{ maxDepth: number; maxKeys: number }>;
  /** Wallet counts and the default policy of an agent's new wallet (src/api/wallets/wallet-bounds.ts). */
  walletBounds: WalletBoundsConfig;
  /** TREASURY_MAX_PATS_PER_ACCOUNT (src/api/platform/pat-bounds.ts). */
  maxPats: number;
  dbPoolMax: number;
  /** How long an idle pooled connection stays open (ms). */
  dbPoolIdleMs: number;
  dbSessionLimits: SessionLimits;
  logLevel: z.infer<typeof envSchema>['TREASURY_LOG_LEVEL'];
  extraChains: string | undefined;
  defaultChain: string;
  rpcUrls: Readonly<Record<string, string>>;
  /** The sandbox's faucets (GET /v1/sandbox/faucets); both null outside the sandbox. */
  sandboxFaucets: { faucet_url: string | null; solana_faucet_url: string | null };
  /** TREASURY_SOLANA_RPC_URL: the Solana chains are served only with it. */
  solanaRpcUrl: string | undefined;
  /** TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS: how long a blockhash read is reused (0: a read per payment). */
  solanaBlockhashMaxAgeMs: number;
  rpcTimeoutMs: number;
  /** Confirmations required per network (ledger rows, upto settlements); networks not named need 1. */
  confirmations: Readonly<Record<string, number>>;
  ledgerVerifyIntervalMs: number;
  ledgerVerifyConcurrency: number;
  ledgerNotFoundGraceSeconds: number;
  /** TREASURY_LEDGER_MAX_REJECTED_PER_SELLER (src/api/sellers/ledger/ledger-pending-cap.ts). */
  ledgerMaxRejectedPerSeller: number;
  sellerMaxEndpoints: number;
  maxSellersPerAccount: number;
  /** Where the platform's payouts are settled (TREASURY_FACILITATOR_URL). */
  facilitatorUrl: string | undefined;
  /** TREASURY_MOR_NETWORKS; undefined: the default chain's and every network with an RPC. */
  morNetworks: readonly string[] | undefined;
  morPayoutMaxMicro: bigint;
  authCacheMs: number;
  discoveryCacheMs: number;
  /** Set by the sandbox: exit when the parent process goes away. */
  exitWithParent: boolean;
  publicUrl: string;
  dashboardUrl: string;
  sessionTtlSeconds: number;
  verifyAllowPrivate: boolean;
  outboundAllowedPorts: readonly number[];
  rateLimits: RateLimitConfig;
  /** Parsed TREASURY_TRUSTED_PROXIES: [address, prefix length] ranges. */
  trustedProxies: readonly TrustedProxy[];
  /** NODE_ENV=production or TREASURY_ENV=production (./production-mode.ts has what it refuses). */
  production: boolean;
  /** The certificate and key the API serves HTTPS with; undefined: plain HTTP. */
  tls: Readonly<{ cert: Buffer; key: Buffer }> | undefined;
  behindTlsProxy: boolean;
}> &
  BoundsConfig;

export type WalletBoundsConfig = Readonly<{
  maxPerAgent: number;
  maxPerAccount: number;
  /** Canonical USD strings. */
  agentDailyCapUsd: string;
  agentPerTxCapUsd: string;
}>;

export type { RateLimitConfig } from './rate-limit-config.js';

export function loadAppConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError('api', issueLines(parsed.error));
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.TREASURY_DATA_DIR);
  const publicUrl = new URL(e.TREASURY_PUBLIC_URL ?? `http://${e.TREASURY_HOST}:${e.TREASURY_PORT}`).origin;
  return Object.freeze({
    host: e.TREASURY_HOST,
    port: e.TREASURY_PORT,
    metricsListener: metricsListenerOf(e),
    databaseUrl: e.DATABASE_URL,
    dataDir,
    embeddedPgPort: e.TREASURY_EMBEDDED_PG_PORT,
    signerSocket: e.TREASURY_SIGNER_SOCKET ?? path.join(dataDir, 'signer.sock'),
    signerTimeoutMs: e.TREASURY_SIGNER_TIMEOUT_MS,
    adminToken: e.TREASURY_ADMIN_TOKEN,
    bodyLimitBytes: e.TREASURY_BODY_LIMIT_BYTES,
    jsonLimits: Object.freeze({ maxDepth: e.TREASURY_JSON_MAX_DEPTH, maxKeys: e.TREASURY_JSON_MAX_KEYS }),
    walletBounds: Object.freeze({
      maxPerAgent: e.TREASURY_MAX_WALLETS_PER_AGENT,
      maxPerAccount: e.TREASURY_MAX_WALLETS_PER_ACCOUNT,
      agentDailyCapUsd: canonicalUsd(e.TREASURY_AGENT_WALLET_DAILY_CAP_USD),
      agentPerTxCapUsd: canonicalUsd(e.TREASURY_AGENT_WALLET_PER_TX_CAP_USD),
    }),
    maxPats: e.TREASURY_MAX_PATS_PER_ACCOUNT,
    dbPoolMax: e.TREASURY_DB_POOL_MAX,
    dbPoolIdleMs: e.TREASURY_DB_POOL_IDLE_MS,
    dbSessionLimits: {
      statementTimeoutMs: e.TREASURY_DB_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: e.TREASURY_DB_LOCK_TIMEOUT_MS,
      idleInTransactionTimeoutMs: e.TREASURY_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
    logLevel: e.TREASURY_LOG_LEVEL,
    extraChains: e.TREASURY_EXTRA_CHAINS,
    defaultChain: e.TREASURY_DEFAULT_CHAIN,
    rpcUrls: parseJsonRecord(RPC_URLS, e.TREASURY_RPC_URLS),
    solanaRpcUrl: e.TREASURY_SOLANA_RPC_URL,
    solanaBlockhashMaxAgeMs: e.TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS,
    sandboxFaucets: {
      faucet_url: e.TREASURY_SANDBOX_FAUCET_URL ?? null,
      solana_faucet_url: e.TREASURY_SANDBOX_SOLANA_FAUCET_URL ?? null,
    },
    rpcTimeoutMs: e.TREASURY_RPC_TIMEOUT_MS,
    confirmations: Object.freeze(parseJsonRecord(LEDGER_CONFIRMATIONS, e.TREASURY_LEDGER_CONFIRMATIONS)),
    ledgerVerifyIntervalMs: e.TREASURY_LEDGER_VERIFY_INTERVAL_MS,
    ledgerVerifyConcurrency: e.TREASURY_LEDGER_VERIFY_CONCURRENCY,
    ledgerNotFoundGraceSeconds: e.TREASURY_LEDGER_NOT_FOUND_GRACE_SECONDS,
    ledgerMaxRejectedPerSeller: e.TREASURY_LEDGER_MAX_REJECTED_PER_SELLER,
    ...boundsConfigOf(e),
    sellerMaxEndpoints: e.TREASURY_SELLER_MAX_ENDPOINTS,
    maxSellersPerAccount: e.TREASURY_MAX_SELLERS_PER_ACCOUNT,
    facilitatorUrl: e.TREASURY_FACILITATOR_URL,
    morNetworks: e.TREASURY_MOR_NETWORKS,
    morPayoutMaxMicro: parseUsd(e.TREASURY_MOR_PAYOUT_MAX_USD),
    authCacheMs: e.TREASURY_AUTH_CACHE_MS,
    discoveryCacheMs: e.TREASURY_DISCOVERY_CACHE_MS,
    exitWithParent: e.TREASURY_EXIT_WITH_PARENT === '1',
    publicUrl,
    sessionTtlSeconds: e.TREASURY_SESSION_TTL_SECONDS,
    verifyAllowPrivate: e.TREASURY_VERIFY_ALLOW_PRIVATE === '1',
    outboundAllowedPorts: e.TREASURY_OUTBOUND_ALLOWED_PORTS,
    rateLimits: rateLimitConfigOf(e),
    trustedProxies: parseTrustedProxies(e.TREASURY_TRUSTED_PROXIES),
    production: e.NODE_ENV === 'production' || e.TREASURY_ENV === 'production',
    tls: readTls(e.TREASURY_TLS_CERT_FILE, e.TREASURY_TLS_KEY_FILE),
    behindTlsProxy: e.TREASURY_BEHIND_TLS_PROXY === '1',
    dashboardUrl: (e.TREASURY_DASHBOARD_URL ?? `${publicUrl}/dashboard`).replace(/\/+$/, ''),
  });
}

/** A variable holding a JSON object, network → value: its schema, its defaults and an example for the refusal. */
interface JsonRecordVariable<T> {
  name: string;
  schema: z.ZodType<Record<string, T>>;
  defaults: Readonly<Record<string, T>>;
  example: string;
}

const caip2Network = z.string().regex(/^eip155:[1-9][0-9]{0,15}$/);

/** Public Base endpoints unless TREASURY_RPC_URLS names others. */
const RPC_URLS: JsonRecordVariable<string> = {
  name: 'TREASURY_RPC_URLS',
  schema: z.record(
    caip2Network,
    z
      .string()
      .url()
      .refine((u) => /^https?:/.test(u), 'expected an http(s) URL'),
  ),
  defaults: { 'eip155:8453': 'https://mainnet.base.org', 'eip155:84532': 'https://sepolia.base.org' },
  example: '{"eip155:84532":"http://127.0.0.1:8545"}',
};

/** Base mainnet waits 10 blocks (~20 s); testnets and the local sandbox chain 1. */
const LEDGER_CONFIRMATIONS: JsonRecordVariable<number> = {
  name: 'TREASURY_LEDGER_CONFIRMATIONS',
  schema: z.record(caip2Network, z.number().int().min(1).max(10_000)),
  defaults: { 'eip155:8453': 10 },
  example: '{"eip155:8453":10}',
};

/**
 * A variable holding a JSON object (network → value), checked by its schema and laid over the defaults; unset or
 * empty: the defaults alone. Malformed JSON or a value the schema refuses stops the start, naming the variable.
 */
function parseJsonRecord<T>(variable: JsonRecordVariable<T>, json: string | undefined): Record<string, T> {
  if (!json) return { ...variable.defaults };
  const parsed = variable.schema.safeParse(jsonOrRefuse(variable, json));
  if (!parsed.success) throw new ConfigError('api', `${variable.name}: ${issueLines(parsed.error).join('; ')}`);
  return { ...variable.defaults, ...parsed.data };
}

function jsonOrRefuse(variable: Pick<JsonRecordVariable<unknown>, 'name' | 'example'>, json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    throw new ConfigError('api', `${variable.name}: expected JSON such as ${variable.example}`);
  }
}

/** zod's issues, one line each: `path: message`. */
function issueLines(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

/** Confirmations required on `network` (see TREASURY_LEDGER_CONFIRMATIONS). */
export function requiredConfirmations(confirmations: Readonly<Record<string, number>>, network: string): number {
  return Object.prototype.hasOwnProperty.call(confirmations, network) ? confirmations[network]! : 1;
}
