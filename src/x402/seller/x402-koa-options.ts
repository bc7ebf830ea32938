/**
 * What a seller passes to the Koa seller middleware (`x402Koa(options)`, `withX402(app, options)`;
 * docs/seller-middleware.md): the options, as given and before any check, and the logger and metrics registry
 * they may carry. Types only: ./seller-options.ts validates them once (with ./seller-option-checks.ts) into
 * the frozen configuration the middleware runs on.
 */
import type { FetchLike } from '../bounded-fetch.js';
import type { FacilitatorLike } from '../facilitator-client.js';
import type { DiscoveryOptions } from './discovery-options.js';
import type { PaymentIdentifierOptions } from './payment-identifier-options.js';
import type { SolanaOfferOptions } from './solana-offer.js';

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
  /**
   * How the middleware calls out (facilitator, platform, ledger): by default its own keep-alive pool over undici's
   * `request` (../pooled-request.ts), a third of the global `fetch`'s CPU a call; give a `fetch` to go through a
   * proxy or a custom agent instead.
   */
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
