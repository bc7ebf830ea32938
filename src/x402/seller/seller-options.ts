/**
 * Options of the Koa seller middleware (docs/seller-middleware.md) and their one-time validation into a frozen
 * configuration. Environment fallbacks (XX_PAY_TO, FACILITATOR_URL, XX_API_URL, XX_ALLOW_LOCAL_ONLY,
 * XX_DISABLE_BODY_CAPTURE) are read here, once, from `options.env` (default `process.env`).
 *
 * Defends against: a seller shipping a paywall that cannot collect or that collects the wrong thing — unknown
 * schemes, `upto` without a facilitator address, missing or malformed payee, price, token, URLs, addresses
 * with a wrong EIP-55 checksum, the zero address as payee, a network without a known USDC, overlapping
 * route-price keys. Every problem is reported at once in one `X402ConfigError`.
 * Does not defend against: a payee address the seller does not control, or a price the seller did not mean.
 */
import { getAddress, isAddress } from 'viem';
import { isUsdString, parseUsd } from '../../../policy/money.js';
import { ChainRegistry } from '../../shared/chain-registry.js';
import type { FetchLike } from '../bounded-fetch.js';
import type { FacilitatorLike } from '../facilitator-client.js';

/** Where Treasury listens by default (TREASURY_HOST:TREASURY_PORT): the api_url when neither option nor env names one. */
export const DEFAULT_TREASURY_API_URL = 'http://127.0.0.1:8402';
import { X402ConfigError } from './x402-config-error.js';

/** The subset of a pino logger the middleware writes to. */
export interface X402Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Registry-like object from prom-client (a `Registry`). */
export type MetricsRegistry = import('prom-client').Registry;

export interface X402KoaOptions {
  /** Service-scoped PAT (`xx_pat_…`). */
  token: string;
  /** USD decimal string per call, e.g. "0.01". "0" makes every route free unless `route_prices` says otherwise. */
  price: string;
  /** Seller wallet address; default env XX_PAY_TO. */
  pay_to?: string;
  /** Facilitator base URL; default env FACILITATOR_URL. Absent → 503 on paid routes (unless XX_ALLOW_LOCAL_ONLY=1). */
  facilitator_url?: string;
  /**
   * A facilitator object instead of a URL: anything with the official `FacilitatorClient` shape of
   * `@x402/core` (`verify(payload, requirements)`, `settle(payload, requirements)`), e.g. an
   * `HTTPFacilitatorClient` or an in-process `x402Facilitator`. Its replies are validated and time-limited
   * exactly like HTTP replies. Give this or `facilitator_url`, not both.
   */
  facilitator?: FacilitatorLike;
  /** On-chain Permit2 caller; required when `upto` is advertised. */
  facilitator_address?: string;
  /** Advertised schemes; default ['exact']; allowed 'exact', 'upto'. */
  schemes?: readonly string[];
  /** Pins ledger attribution; required when the seller has 2 or more endpoints. */
  endpoint_id?: string;
  /** Exact-path price overrides; "0" or "" means free. */
  route_prices?: Readonly<Record<string, string>>;
  /** CAIP-2 network; default eip155:84532. */
  network?: string;
  /** Platform base URL for PAT validation and ledger reports; default env XX_API_URL, else http://127.0.0.1:8402. */
  api_url?: string;
  /** Token contract; default the network's USDC. */
  asset?: string;
  /** EIP-712 domain name of the token; default the network's USDC name. */
  asset_name?: string;
  /** EIP-712 domain version of the token; default the network's USDC version. */
  asset_version?: string;
  /** Payment time-out advertised in the challenge; default 300. */
  max_timeout_seconds?: number;
  /** Challenge description (free text). */
  description?: string;
  /** Challenge mimeType; default application/json. */
  mime_type?: string;
  /** Largest response body held in memory until settlement; larger streams are held unread instead. Default 8 MiB. */
  max_body_bytes?: number;
  fetch?: FetchLike;
  logger?: X402Logger;
  /** prom-client registry for the middleware's metrics; default a private one. */
  registry?: MetricsRegistry;
  /** Environment to read fallbacks from; default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Time-outs in milliseconds. */
  timeouts?: { verify_ms?: number; settle_ms?: number; platform_ms?: number };
  /** Seller-identity cache: success kept `success_ttl_ms` (60 s), failures retried after `failure_cooldown_ms` (5 s). */
  seller_cache?: { success_ttl_ms?: number; failure_cooldown_ms?: number };
  /** Delays between ledger report attempts; default [500, 2000, 8000] (so 4 attempts). */
  ledger_retry_delays_ms?: readonly number[];
}

export interface ResolvedX402Config {
  token: string;
  priceMicro: bigint;
  routePrices: ReadonlyMap<string, bigint>;
  payTo: `0x${string}`;
  facilitatorUrl: string | undefined;
  facilitatorAddress: `0x${string}` | undefined;
  schemes: readonly ('exact' | 'upto')[];
  endpointId: string | undefined;
  network: string;
  v1NetworkName: string | undefined;
  apiUrl: string;
  asset: `0x${string}`;
  assetName: string;
  assetVersion: string;
  maxTimeoutSeconds: number;
  description: string;
  mimeType: string;
  maxBodyBytes: number;
  allowLocalOnly: boolean;
  disableBodyCapture: boolean;
  verifyTimeoutMs: number;
  settleTimeoutMs: number;
  platformTimeoutMs: number;
  sellerSuccessTtlMs: number;
  sellerFailureCooldownMs: number;
  ledgerRetryDelaysMs: readonly number[];
}

const V1_NETWORK_NAMES: Readonly<Record<string, string>> = { 'eip155:8453': 'base', 'eip155:84532': 'base-sepolia' };
export const V1_NAME_TO_NETWORK: Readonly<Record<string, string>> = {
  base: 'eip155:8453',
  'base-sepolia': 'eip155:84532',
};
const builtInChains = ChainRegistry.fromConfig(undefined);

/**
 * The key a request path is priced by: percent-decoded, lower-cased, duplicate and trailing slashes removed.
 * Routers commonly match case-insensitively and ignore a trailing slash, so pricing must not be cheaper to
 * reach by spelling a path differently.
 */
export function routePriceKey(path: string): string {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // keep the raw spelling; it cannot match a configured key anyway
  }
  const collapsed = decoded.toLowerCase().replace(/\/{2,}/g, '/');
  return collapsed.length > 1 ? collapsed.replace(/\/+$/, '') || '/' : collapsed;
}

function checkAddress(
  label: string,
  value: unknown,
  problems: string[],
  options: { allowZero?: boolean } = {},
): `0x${string}` | undefined {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value)) {
    problems.push(`${label} must be a 0x-prefixed 20-byte hex address`);
    return undefined;
  }
  const mixed = !/^0x[0-9a-f]{40}$/.test(value) && !/^0x[0-9A-F]{40}$/.test(value);
  if (mixed && !isAddress(value, { strict: true })) {
    problems.push(`${label} has a wrong EIP-55 checksum`);
    return undefined;
  }
  if (!options.allowZero && /^0x0{40}$/.test(value)) {
    problems.push(`${label} must not be the zero address`);
    return undefined;
  }
  return getAddress(value.toLowerCase());
}

function checkHttpUrl(label: string, value: string, problems: string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(`${label} must be an absolute http(s) URL`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`${label} must be an http(s) URL`);
    return undefined;
  }
  if (url.username || url.password) {
    problems.push(`${label} must not carry credentials`);
    return undefined;
  }
  return value.replace(/\/+$/, '');
}

function positiveInt(label: string, value: unknown, fallback: number, max: number, problems: string[]): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    problems.push(`${label} must be an integer from 1 to ${max}`);
    return fallback;
  }
  return value;
}

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);

/** Validates `options`; throws one `X402ConfigError` listing every problem. */
export function resolveX402Options(options: X402KoaOptions): ResolvedX402Config {
  const problems: string[] = [];
  if (options === null || typeof options !== 'object') throw new X402ConfigError(['options must be an object']);
  const env = options.env ?? process.env;

  const token = options.token;
  if (typeof token !== 'string' || token === '') problems.push('token (a service PAT) is required');
  else if (/^xx_(live|treasury)_sk_/.test(token))
    problems.push('token is a removed master key; create a service PAT with `xx service pat create`');
  else if (!/^xx_pat_[A-Za-z0-9_-]{16,256}$/.test(token)) problems.push('token must be a service PAT (xx_pat_…)');

  let priceMicro = 0n;
  if (options.price === undefined || options.price === null) problems.push('price (USD decimal string) is required');
  else if (!isUsdString(options.price))
    problems.push(
      `price must be a USD decimal string with at most 6 decimals, e.g. "0.01" (got ${JSON.stringify(String(options.price)).slice(0, 40)})`,
    );
  else priceMicro = parseUsd(options.price);

  const routePrices = new Map<string, bigint>();
  if (options.route_prices !== undefined) {
    if (
      options.route_prices === null ||
      typeof options.route_prices !== 'object' ||
      Array.isArray(options.route_prices)
    )
      problems.push('route_prices must be an object mapping paths to USD strings');
    else {
      for (const [path, value] of Object.entries(options.route_prices)) {
        if (!/^\/[^\s?#]*$/.test(path) || path.length > 512) {
          problems.push(`route_prices key ${JSON.stringify(path).slice(0, 60)} must be an absolute path without query`);
          continue;
        }
        if (value !== '' && !isUsdString(value)) {
          problems.push(`route_prices[${JSON.stringify(path)}] must be a USD decimal string, "0" or ""`);
          continue;
        }
        const key = routePriceKey(path);
        if (routePrices.has(key)) problems.push(`route_prices has two keys for the same path ${JSON.stringify(path)}`);
        routePrices.set(key, value === '' ? 0n : parseUsd(value));
      }
    }
  }

  const payToRaw = nonEmpty(options.pay_to) ?? nonEmpty(env.XX_PAY_TO);
  const payTo =
    payToRaw === undefined
      ? (problems.push('pay_to (or env XX_PAY_TO) is required'), undefined)
      : checkAddress('pay_to', payToRaw, problems);

  const schemesRaw = options.schemes ?? ['exact'];
  const schemes: ('exact' | 'upto')[] = [];
  if (!Array.isArray(schemesRaw) || schemesRaw.length === 0)
    problems.push('schemes must be a non-empty list of "exact" and/or "upto"');
  else {
    for (const s of schemesRaw) {
      if (s !== 'exact' && s !== 'upto')
        problems.push(`schemes: ${JSON.stringify(s)} is not supported (allowed: "exact", "upto")`);
      else if (!schemes.includes(s)) schemes.push(s);
    }
  }

  let facilitatorAddress: `0x${string}` | undefined;
  if (nonEmpty(options.facilitator_address) !== undefined)
    facilitatorAddress = checkAddress('facilitator_address', options.facilitator_address, problems);
  if (schemes.includes('upto') && nonEmpty(options.facilitator_address) === undefined)
    problems.push('facilitator_address is required when "upto" is in schemes');

  if (options.facilitator !== undefined) {
    const f = options.facilitator as Partial<FacilitatorLike> | null;
    if (f === null || typeof f !== 'object' || typeof f.verify !== 'function' || typeof f.settle !== 'function')
      problems.push('facilitator must be an object with verify() and settle() methods');
    if (nonEmpty(options.facilitator_url) !== undefined) problems.push('give facilitator or facilitator_url, not both');
  }
  const facilitatorRaw =
    options.facilitator !== undefined
      ? undefined
      : (nonEmpty(options.facilitator_url) ?? nonEmpty(env.FACILITATOR_URL));
  const facilitatorUrl =
    facilitatorRaw === undefined ? undefined : checkHttpUrl('facilitator_url', facilitatorRaw, problems);

  // api_url, else env XX_API_URL, else Treasury's own default address (as the xx CLI's; docs/seller-middleware.md).
  const apiUrl = checkHttpUrl(
    'api_url',
    nonEmpty(options.api_url) ?? nonEmpty(env.XX_API_URL) ?? DEFAULT_TREASURY_API_URL,
    problems,
  );

  const endpointId = nonEmpty(options.endpoint_id);
  if (endpointId !== undefined && !/^ep_[0-9a-f]{24}$/.test(endpointId))
    problems.push('endpoint_id must look like ep_ followed by 24 hex digits');

  const network = options.network ?? 'eip155:84532';
  const chain = typeof network === 'string' ? builtInChains.resolve(network) : undefined;
  if (typeof network !== 'string' || !/^eip155:[1-9][0-9]{0,15}$/.test(network))
    problems.push('network must be a CAIP-2 EVM id such as eip155:84532');
  else if (
    !chain &&
    (options.asset === undefined || options.asset_name === undefined || options.asset_version === undefined)
  ) {
    problems.push(`network ${network} has no built-in USDC; set asset, asset_name and asset_version`);
  }
  const asset = options.asset !== undefined ? checkAddress('asset', options.asset, problems) : chain?.usdc;
  const assetName = options.asset_name ?? chain?.usdcName;
  const assetVersion = options.asset_version ?? chain?.usdcVersion;
  if (
    options.asset_name !== undefined &&
    (typeof options.asset_name !== 'string' || options.asset_name.length === 0 || options.asset_name.length > 64)
  )
    problems.push('asset_name must be 1 to 64 characters');
  if (
    options.asset_version !== undefined &&
    (typeof options.asset_version !== 'string' ||
      options.asset_version.length === 0 ||
      options.asset_version.length > 16)
  )
    problems.push('asset_version must be 1 to 16 characters');

  const maxTimeoutSeconds = positiveInt('max_timeout_seconds', options.max_timeout_seconds, 300, 86_400, problems);
  const maxBodyBytes = positiveInt(
    'max_body_bytes',
    options.max_body_bytes,
    8 * 1024 * 1024,
    1024 * 1024 * 1024,
    problems,
  );
  const description = options.description ?? '';
  if (typeof description !== 'string' || description.length > 1024)
    problems.push('description must be at most 1024 characters');
  const mimeType = options.mime_type ?? 'application/json';
  if (typeof mimeType !== 'string' || mimeType.length > 256) problems.push('mime_type must be at most 256 characters');
  if (options.fetch !== undefined && typeof options.fetch !== 'function') problems.push('fetch must be a function');

  const retry = options.ledger_retry_delays_ms ?? [500, 2000, 8000];
  if (
    !Array.isArray(retry) ||
    retry.length > 10 ||
    retry.some((d) => typeof d !== 'number' || !(d >= 0) || d > 600_000)
  )
    problems.push('ledger_retry_delays_ms must be at most 10 delays of 0 to 600000 ms');

  if (problems.length > 0) throw new X402ConfigError(problems);

  return Object.freeze({
    token,
    priceMicro,
    routePrices,
    payTo: payTo!,
    facilitatorUrl,
    facilitatorAddress,
    schemes: Object.freeze(schemes),
    endpointId,
    network,
    v1NetworkName: V1_NETWORK_NAMES[network],
    apiUrl: apiUrl!,
    asset: asset!,
    assetName: assetName!,
    assetVersion: assetVersion!,
    maxTimeoutSeconds,
    description,
    mimeType,
    maxBodyBytes,
    allowLocalOnly: env.XX_ALLOW_LOCAL_ONLY === '1',
    disableBodyCapture: env.XX_DISABLE_BODY_CAPTURE === '1',
    verifyTimeoutMs: options.timeouts?.verify_ms ?? 10_000,
    settleTimeoutMs: options.timeouts?.settle_ms ?? 30_000,
    platformTimeoutMs: options.timeouts?.platform_ms ?? 5_000,
    sellerSuccessTtlMs: options.seller_cache?.success_ttl_ms ?? 60_000,
    sellerFailureCooldownMs: options.seller_cache?.failure_cooldown_ms ?? 5_000,
    ledgerRetryDelaysMs: Object.freeze([...retry]),
  });
}
