/**
 * What the paywall (./paid-request.ts) needs of its adapter — the Koa middleware or the gate: how it reads a
 * request, runs the paid work with its response held, and answers — and what it is built with. Types only.
 */
import type { Readable } from 'node:stream';
import type { FacilitatorClient as Facilitator } from '../facilitator-client.js';
import type { CapturedBody } from './held-body.js';
import type { LedgerReporter } from './ledger-reporter.js';
import type { X402MiddlewareMetrics } from './middleware-metrics.js';
import type { PaymentIdentifierStore } from './payment-identifier-store.js';
import type { PaywallAnswer } from './paywall-answers.js';
import type { ReplayGuard } from './replay-guard.js';
import type { SellerState } from './seller-identity.js';
import type { ResolvedX402Config } from './seller-options.js';
import type { SettlementOverride } from './settlement-amount.js';
import type { SolanaTerms } from './solana-terms.js';
import type { X402Logger } from './x402-koa-options.js';

/** What the paywall reads of a request. */
export interface PaidRequest {
  method: string;
  /** The path as the seller prices and reports it (the origin's path behind the gate). */
  path: string;
  /** The URL the buyer asked for: the challenge's resource. */
  href: string;
  /** What the buyer's URL has before `path` (the gate's `/<slug>`), for the Bazaar route template. */
  prefix?: string | undefined;
  header(name: string): string | string[] | undefined;
  /** sha256 hex of the request body, for the `payment-identifier` fingerprint (absent: no body is known). */
  bodySha256?(): string;
}

/** One seller's terms: its configuration and where its current state comes from. */
export interface PaidSite {
  config: ResolvedX402Config;
  seller(): Promise<SellerState> | SellerState;
  /** The Solana terms of the site's Solana offer (its fee payer, its pay-to's token accounts), when it has one. */
  solana?: SolanaTerms | undefined;
  /** Whose `payment-identifier` ids these are (default: the verified seller's id). */
  paymentIdScope?: string;
  /**
   * A bodiless GET or HEAD of `/health` passes unpaid unless `route_prices` prices it (the Koa middleware). Unset
   * for the gate, which passes `/health` itself only when no endpoint of its method prices it.
   */
  healthProbe?: boolean;
}

/** The paid work's response, held by the adapter until the paywall settles or discards it. */
export interface HeldResponse {
  captured: CapturedBody;
  /** The paid work's status. */
  status: number;
  /** The paid work's headers a `payment-identifier` answer replays (payment-identifier-rule.ts `REPLAYED_HEADERS`). */
  headers(): Record<string, string | undefined>;
  /** The `Settlement-Overrides` the paid work named (already removed from the response). */
  override: SettlementOverride;
  /** Nothing is settled: drop the body (the paywall calls `discardBody`) and every header the paid work set. */
  dropHeaders(): void;
  /**
   * Send the held response with `headers` added; `body` replaces the held body (undefined: keep it as is);
   * `defaultCacheControl` is set when the response names none.
   */
  release(headers: Record<string, string>, body: Buffer | Readable | undefined, defaultCacheControl?: string): void;
}

/** How an adapter lets the paywall act on its request and response. */
export interface PaidRequestPort {
  /** Let the request through unpaid (a free route, the `/health` probe). */
  pass(): Promise<void>;
  /** Answer without running the paid work (a challenge, an error, or a preflight's 204 without a body). */
  answer(answer: PaywallAnswer): void;
  /** Answer with a stored paid answer (a `payment-identifier` retry): status, headers, raw body. */
  replay(answer: { status: number; headers: Record<string, string>; body: Buffer }): void;
  /**
   * Run the paid work. `failed`: its answer (status ≥ 400, an unreachable origin) goes out as the adapter
   * wrote it and nothing is settled. A throw propagates (nothing settled).
   */
  run(): Promise<HeldResponse | 'failed'>;
}

export interface PaidRequestDeps {
  /** The facilitator of the EVM network. */
  facilitator: Facilitator | undefined;
  /** The facilitator of the Solana offers (a site's Solana payments are verified and settled there). */
  solanaFacilitator?: Facilitator | undefined;
  ledger: LedgerReporter;
  guard: ReplayGuard;
  /** Where `payment-identifier` ids are kept (absent: ids are read and checked, but nothing is deduplicated). */
  paymentIds?: PaymentIdentifierStore | undefined;
  metrics: X402MiddlewareMetrics;
  logger: X402Logger;
}
