/**
 * The one-time validation of the Koa seller middleware's options (./x402-koa-options.ts;
 * docs/seller-middleware.md) into a frozen configuration: Base (EVM) terms from `pay_to`, Solana terms from
 * `solana` (./solana-offer.ts), either or both. Environment fallbacks (XX_PAY_TO, FACILITATOR_URL, XX_API_URL,
 * XX_ALLOW_LOCAL_ONLY, XX_DISABLE_BODY_CAPTURE) are read here, once, from `options.env` (default `process.env`).
 *
 * Defends against: a seller shipping a paywall that cannot collect or that collects the wrong thing — unknown
 * schemes, `upto` without a facilitator address, missing or malformed payee, price, token, URLs, addresses
 * with a wrong EIP-55 checksum, the zero address as payee, a network without a known USDC, overlapping
 * route-price keys. Every problem is reported at once in one `X402ConfigError`.
 * Does not defend against: a payee address the seller does not control, or a price the seller did not mean.
 */
import type { X402KoaOptions } from './x402-koa-options.js';
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
import { resolveDiscovery, type ResolvedDiscovery } from './discovery-options.js';
import { checkSolanaOffer, type ResolvedSolanaOffer } from './solana-offer.js';
import { checkPaymentIdentifier, type ResolvedPaymentIdentifier } from './payment-identifier-options.js';

/** Where Treasury listens by default (TREASURY_HOST:TREASURY_PORT): the api_url when neither option nor env names one. */
export const DEFAULT_TREASURY_API_URL = 'http://127.0.0.1:8402';

export { routePriceKey } from './seller-option-checks.js';

export interface ResolvedX402Config {
  token: string;
  priceMicro: bigint;
  /** `route_prices` by `routePriceKey`, in micro-USD. */
  routePrices: ReadonlyMap<string, bigint>;
  /** By the same key: the spellings of the path a route price applies to as is (./route-price.ts). */
  routePriceSpellings: ReadonlyMap<string, readonly string[]>;
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
  const { prices: routePrices, spellings: routePriceSpellings } = checkRoutePrices(options, problems);

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
    routePriceSpellings,
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
