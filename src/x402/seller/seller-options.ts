/**
 * Options of the Koa seller middleware (docs/seller-middleware.md) and their one-time validation into a frozen
 * configuration: Base (EVM) terms from `pay_to`, Solana terms from `solana` (./solana-offer.ts), either or both. Environment fallbacks (XX_PAY_TO, FACILITATOR_URL, XX_API_URL, XX_ALLOW_LOCAL_ONLY,
 * XX_DISABLE_BODY_CAPTURE) are read here, once, from `options.env` (default `process.env`).
 *
 * Defends against: a seller shipping a paywall that cannot collect or that collects the wrong thing — unknown
 * schemes, `upto` without a facilitator address, missing or malformed payee, price, token, URLs, addresses
 * with a wrong EIP-55 checksum, the zero address as payee, a network without a known USDC, overlapping
 * route-price keys. Every problem is reported at once in one `X402ConfigError`.
 * Does not defend against: a payee address the seller does not control, or a price the seller did not mean.
 */
import type { FetchLike } from '../bounded-fetch.js';
import type { FacilitatorLike } from '../facilitator-client.js';

/** Where Treasury listens by default (TREASURY_HOST:TREASURY_PORT): the api_url when neither option nor env names one. */
export const DEFAULT_TREASURY_API_URL = 'http://127.0.0.1:8402';
import { X402ConfigError } from './x402-config-error.js';
import {
  checkAddress,
  checkAsset,
  checkDescription,
  checkFacilitator,
  checkHttpUrl,
  checkPrice,
  checkRetryDelays,
  checkRoutePrices,
  checkSchemes,
  checkToken,
  nonEmpty,
  positiveInt,
} from './seller-option-checks.js';
import { resolveDiscovery, type DiscoveryOptions, type ResolvedDiscovery } from './discovery-options.js';
import { checkSolanaOffer, type ResolvedSolanaOffer, type SolanaOfferOptions } from './solana-offer.js';
import {
  checkPaymentIdentifier,
  type PaymentIdentifierOptions,
  type ResolvedPaymentIdentifier,
} from './payment-identifier-options.js';

export { routePriceKey } from './seller-option-checks.js';

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
  /** Seller wallet address on the EVM network; default env XX_PAY_TO. Optional when `solana` is given (Solana only). */
  pay_to?: string;
  /** Also (or only) sell on Solana: `{ pay_to (base58), network?, facilitator_url | facilitator, asset? }`. */
  solana?: SolanaOfferOptions;
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
  /** What 402 challenges declare for x402 Bazaar catalogues (./discovery-options.ts); on by default. */
  discovery?: DiscoveryOptions;
  /** x402 `payment-identifier`: a retried paid request with the same id is answered, not paid again. */
  payment_identifier?: PaymentIdentifierOptions;
}

export interface ResolvedX402Config {
  token: string;
  priceMicro: bigint;
  routePrices: ReadonlyMap<string, bigint>;
  /** The EVM pay-to; undefined when the seller sells on Solana only. */
  payTo: `0x${string}` | undefined;
  /** The Solana offer, when the seller sells there. */
  solana: ResolvedSolanaOffer | undefined;
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
  /** The Bazaar declaration's settings; undefined when the seller turned it off. */
  discovery: ResolvedDiscovery | undefined;
  paymentIdentifier: Readonly<ResolvedPaymentIdentifier>;
}

const V1_NETWORK_NAMES: Readonly<Record<string, string>> = { 'eip155:8453': 'base', 'eip155:84532': 'base-sepolia' };
export const V1_NAME_TO_NETWORK: Readonly<Record<string, string>> = {
  base: 'eip155:8453',
  'base-sepolia': 'eip155:84532',
};

/** Validates `options`; throws one `X402ConfigError` listing every problem. */
export function resolveX402Options(options: X402KoaOptions): ResolvedX402Config {
  const problems: string[] = [];
  if (options === null || typeof options !== 'object') throw new X402ConfigError(['options must be an object']);
  const env = options.env ?? process.env;

  const token = checkToken(options, problems);
  const priceMicro = checkPrice(options, problems);
  const routePrices = checkRoutePrices(options, problems);

  const solana = checkSolanaOffer(options.solana, problems, checkHttpUrl);
  const payToRaw = nonEmpty(options.pay_to) ?? nonEmpty(env.XX_PAY_TO);
  const payTo =
    payToRaw === undefined
      ? options.solana === undefined
        ? (problems.push('pay_to (or env XX_PAY_TO) is required'), undefined)
        : undefined
      : checkAddress('pay_to', payToRaw, problems);

  const schemes = checkSchemes(options, problems);
  const { facilitatorAddress, facilitatorUrl } = checkFacilitator(options, env, schemes, problems);

  // api_url, else env XX_API_URL, else Treasury's own default address (as the xx CLI's; docs/seller-middleware.md).
  const apiUrl = checkHttpUrl(
    'api_url',
    nonEmpty(options.api_url) ?? nonEmpty(env.XX_API_URL) ?? DEFAULT_TREASURY_API_URL,
    problems,
  );

  const endpointId = nonEmpty(options.endpoint_id);
  if (endpointId !== undefined && !/^ep_[0-9a-f]{24}$/.test(endpointId))
    problems.push('endpoint_id must look like ep_ followed by 24 hex digits');

  const { network, asset, assetName, assetVersion } = checkAsset(options, problems);

  const maxTimeoutSeconds = positiveInt('max_timeout_seconds', options.max_timeout_seconds, 300, 86_400, problems);
  const maxBodyBytes = positiveInt(
    'max_body_bytes',
    options.max_body_bytes,
    8 * 1024 * 1024,
    1024 * 1024 * 1024,
    problems,
  );
  const { description, mimeType } = checkDescription(options, problems);
  const retry = checkRetryDelays(options, problems);
  const discovery = resolveDiscovery(options.discovery, problems);
  const paymentIdentifier = checkPaymentIdentifier(options.payment_identifier, problems);

  if (problems.length > 0) throw new X402ConfigError(problems);

  return Object.freeze({
    token,
    priceMicro,
    routePrices,
    payTo,
    solana,
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
    discovery,
    paymentIdentifier,
  });
}
