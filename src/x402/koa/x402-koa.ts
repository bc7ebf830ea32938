/**
 * `x402Koa(options)`: Koa middleware that gates a seller's routes behind x402 (docs/seller-middleware.md;
 * the wire in docs/adr/0004-x402-wire-and-koa-middleware.md). A thin adapter: the rules live in the
 * framework-free paywall (../seller/paid-request.ts, shared with the gate); this file reads the Koa request,
 * runs the handler (`next`), holds its body (body-capture.ts) and writes the paywall's answers.
 *
 * Per request, in this order:
 *   1. `/health`, OPTIONS (CORS preflights cannot carry a payment) and free routes (price 0) pass through.
 *   2. No facilitator and XX_ALLOW_LOCAL_ONLY≠1 → 503, `Retry-After: 5`.
 *   3. The service PAT is validated with the platform (cached); a refused PAT or an ambiguous endpoint set →
 *      500 `seller_misconfigured` (the error, listing every (slug, endpoint_id), goes to the logger).
 *   4. No payment header → 402 challenge (`PAYMENT-REQUIRED` + `X-PAYMENT-REQUIRED`, same JSON as the body,
 *      `Cache-Control: no-store`). Undecodable header → 400 `invalid_payment_header`.
 *   5. Payment for other terms, or already in flight / settled in this process → 402 re-issued with an error.
 *   6. Facilitator verify: invalid, unreachable, slow, 5xx or malformed → 402 re-issued. Never the handler.
 *   7. The handler runs. Throws or status ≥ 400 → its response goes out as is, nothing is settled.
 *   8. The body is held (body-capture.ts), then settled — for `upto`, the amount the handler named with
 *      `setSettlementOverrides(ctx, {amount})` (at most the signed maximum; invalid → 500
 *      `settlement_override_invalid`, nothing settled), else the maximum. Success → body released with the receipt on
 *      `PAYMENT-RESPONSE` + `X-PAYMENT-RESPONSE`, ledger row reported in the background. Failure or facilitator
 *      down → body and handler headers discarded, 402 re-issued with a `success:false` receipt.
 *   Local-only mode (no facilitator, XX_ALLOW_LOCAL_ONLY=1): a well-formed payment for the right terms inside
 *   its validity window is accepted without verification or settlement; the receipt has an empty transaction
 *   and `errorReason: "local_only_unverified"`; no ledger row is reported.
 *   Rule 6: if the handler bypassed Koa (`ctx.respond = false`, or wrote headers itself) the body has already
 *   left; the payment is still settled, but no receipt header can be added.
 *
 * Defends against: serving paid content without a settled payment (verify before, settle after, body held);
 * a facilitator outage becoming a free pass (every failure is a 402); double use of one payment within the
 * process (replay-guard.ts); hostile headers (decoders refuse them with 400 before any handler runs).
 * Does not defend against: replays across processes (the token's on-chain nonce is the final guard); a
 * dishonest facilitator; a handler that streams to `ctx.res` directly (rule 6 above).
 */
import type { Context, Middleware, Next } from 'koa';
import { resolveFacilitator } from '../facilitator-client.js';
import { LedgerReporter } from '../seller/ledger-reporter.js';
import { createX402MiddlewareMetrics } from '../seller/middleware-metrics.js';
import { PaidRequestCore, type PaidRequestPort, type PaidSite } from '../seller/paid-request.js';
import { ReplayGuard } from '../seller/replay-guard.js';
import { SellerIdentity } from '../seller/seller-identity.js';
import {
  resolveX402Options,
  type ResolvedX402Config,
  type X402KoaOptions,
  type X402Logger,
} from '../seller/seller-options.js';
import { captureBody } from './body-capture.js';
import { takeSettlementOverride } from './settlement-amount.js';

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
  const doFetch = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const metrics = createX402MiddlewareMetrics(options.registry);
  const facilitator = resolveFacilitator(options.facilitator, config, doFetch);
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
  const core = new PaidRequestCore({ facilitator, ledger, guard: new ReplayGuard(), metrics, logger });
  const site: PaidSite = { config, seller: () => seller.current() };

  /** The paywall's view of one Koa request: `next` is the paid work, ctx.body the held response. */
  function portOf(ctx: Context, next: Next): PaidRequestPort {
    return {
      pass: () => next(),
      answer(answer) {
        ctx.status = answer.status;
        for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
        ctx.body = answer.body;
      },
      async run() {
        const headersBefore = new Set(Object.keys(ctx.response.headers));
        await next();
        if (ctx.status >= 400) return 'failed';
        const captured = await captureBody(ctx, config.maxBodyBytes);
        return {
          captured,
          override: takeSettlementOverride(ctx),
          /** Removes every response header the handler added (a discarded paid response must not leak through them). */
          dropHeaders() {
            for (const name of Object.keys(ctx.response.headers)) if (!headersBefore.has(name)) ctx.remove(name);
          },
          release(headers, body, defaultCacheControl) {
            for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
            if (defaultCacheControl && !ctx.response.get('Cache-Control'))
              ctx.set('Cache-Control', defaultCacheControl);
            if (body !== undefined) ctx.body = body;
          },
        };
      },
    };
  }

  const middleware = (ctx: Context, next: Next): Promise<void> =>
    core.handle(
      site,
      { method: ctx.method, path: ctx.path, href: ctx.href, header: (name) => ctx.req.headers[name] },
      portOf(ctx, next),
    );

  return Object.assign(middleware, { config, flush: () => ledger.flush() });
}
