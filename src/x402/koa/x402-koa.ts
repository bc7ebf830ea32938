/**
 * `x402Koa(options)`: Koa middleware that gates a seller's routes behind x402 (docs/seller-middleware.md;
 * the wire in docs/adr/0004-x402-wire-and-koa-middleware.md). A thin adapter: it relies on the framework-free
 * paywall (../seller/paid-request.ts, shared with the gate), which owns the rules, their order and every answer
 * (docs/seller-middleware.md#rules-and-runtime-answers). This file builds the paywall's parts once per
 * middleware (facilitator client, seller identity, ledger reporter, replay guard, payment-identifier store)
 * and, per request, only reads the Koa request; ./koa-port.ts runs the handler (`next`) as the paid work, holds
 * its body (body-capture.ts), takes the `upto` amount the handler named with `setSettlementOverrides`
 * (./settlement-amount.ts) and writes the paywall's answers on `ctx`.
 *
 * Defends, as the Koa side of the paywall: a path priced as one route and served as another (every `ctx.path` is
 * held to the gate's path rule first, ../seller/refused-path.ts: `/data/./premium.csv`, `/x/%2e%2e/…`, `%2f` are
 * 400 `x402_path_refused`, never priced); a handler's body or headers leaving before settlement (the body is
 * held, the handler's headers are dropped with it when the settlement fails); the override header reaching the
 * buyer; the handler running unpaid for OPTIONS to a priced route (the paywall answers the preflight) or for
 * `/health` other than as a bodiless GET or HEAD of an unpriced probe.
 * Does not defend against: a handler that bypasses Koa (`ctx.respond = false`, or writes `ctx.res` itself) —
 * its body has already left; the payment is still settled, but no receipt header can be added.
 */
import { createHash } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import { resolveFacilitator } from '../facilitator-client.js';
import { LedgerReporter } from '../seller/ledger-reporter.js';
import { createX402MiddlewareMetrics } from '../seller/middleware-metrics.js';
import { PaidRequestCore, type PaidSite } from '../seller/paid-request.js';
import { ReplayGuard } from '../seller/replay-guard.js';
import { SellerIdentity } from '../seller/seller-identity.js';
import { solanaSide } from '../seller/solana-side.js';
import { resolveX402Options, type ResolvedX402Config } from '../seller/seller-options.js';
import type { X402KoaOptions, X402Logger } from '../seller/x402-koa-options.js';
import { createPaymentIdentifierStore } from '../seller/payment-identifier-stores.js';
import { refusedPathAnswer } from '../seller/refused-path.js';
import { koaPort } from './koa-port.js';
import { koaBodySha256 } from './request-body-digest.js';

export { X402_MIDDLEWARE_ERRORS } from '../seller/paywall-answers.js';

export interface X402KoaMiddleware extends Middleware {
  /** The validated configuration. */
  readonly config: ResolvedX402Config;
  /** Resolves when every queued ledger report has finished (for graceful shutdown and tests). */
  flush(): Promise<void>;
}

const silentLogger: X402Logger = { debug() {}, info() {}, warn() {}, error() {} };

export function x402Koa(options: X402KoaOptions): X402KoaMiddleware {
  const config = resolveX402Options(options);
  const logger = options.logger ?? silentLogger;
  const doFetch = options.fetch; // undefined: the keep-alive pool (../pooled-request.ts)
  const metrics = createX402MiddlewareMetrics(options.registry);
  const facilitator = resolveFacilitator(options.facilitator, config, doFetch);
  const solana = solanaSide(options, config, doFetch, logger);
  const seller = new SellerIdentity({
    apiUrl: config.apiUrl,
    network: config.network,
    token: config.token,
    endpointId: config.endpointId,
    fetch: doFetch,
    timeoutMs: config.platformTimeoutMs,
    successTtlMs: config.sellerSuccessTtlMs,
    failureCooldownMs: config.sellerFailureCooldownMs,
    logger,
  });
  const ledger = new LedgerReporter({
    apiUrl: config.apiUrl,
    token: config.token,
    fetch: doFetch,
    timeoutMs: config.platformTimeoutMs,
    retryDelaysMs: config.ledgerRetryDelaysMs,
    metrics,
    logger,
  });
  const core = new PaidRequestCore({
    facilitator,
    solanaFacilitator: solana?.facilitator,
    ledger,
    guard: new ReplayGuard(),
    paymentIds: createPaymentIdentifierStore(config, {
      fetch: doFetch,
      routes: {
        begin: '/v1/payment-ids/begin',
        complete: '/v1/payment-ids/complete',
        release: '/v1/payment-ids/release',
      },
    }),
    metrics,
    logger,
  });
  // One middleware is one seller; its ids are scoped by its PAT (hashed: the store never sees the token).
  const paymentIdScope = createHash('sha256').update(config.token).digest('hex').slice(0, 32);
  // `/health` is the seller's probe: a bodiless GET or HEAD of it passes unless route_prices prices it.
  const site: PaidSite = {
    config,
    seller: () => seller.current(),
    solana: solana?.terms,
    paymentIdScope,
    healthProbe: true,
  };

  const middleware = async (ctx: Context, next: Next): Promise<void> => {
    const port = koaPort(ctx, next, config.maxBodyBytes);
    // The path rule first, on the path priced (and served): a refused one meets no 402, no payment, no handler.
    const refused = refusedPathAnswer(ctx.path);
    if (refused) return port.answer(refused);
    return core.handle(
      site,
      {
        method: ctx.method,
        path: ctx.path,
        href: ctx.href,
        header: (name) => ctx.req.headers[name],
        bodySha256: () => koaBodySha256(ctx),
      },
      port,
    );
  };

  return Object.assign(middleware, { config, flush: () => ledger.flush() });
}
