/**
 * `x402Koa(options)`: Koa middleware that gates a seller's routes behind x402 (docs/seller-middleware.md;
 * the wire in docs/adr/0004-x402-wire-and-koa-middleware.md).
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
import { ERROR_CODES } from '../../shared/error-codes.js';
import type { Context, Middleware, Next } from 'koa';
import { createFacilitatorClient, wrapFacilitatorObject, type FacilitatorRequest } from '../facilitator-client.js';
import {
  encodePaymentRequired,
  encodeSettlementReceipt,
  X402_HEADERS,
  decodePaymentPayload,
  readPaymentHeader,
} from '../header-codec.js';
import type { PaymentPayload, PaymentRequired, SettlementReceiptInput } from '../wire-schemas.js';
import { X402DecodeError } from '../x402-decode-error.js';
import { captureBody, discardBody, releaseOversize, sha256Hex, type CapturedBody } from './body-capture.js';
import {
  resolveX402Options,
  routePriceKey,
  type ResolvedX402Config,
  type X402KoaOptions,
  type X402Logger,
} from './koa-options.js';
import { LedgerReporter } from './ledger-reporter.js';
import { createX402MiddlewareMetrics, type RequestOutcome } from './middleware-metrics.js';
import { buildRouteTerms, matchPayment, type PaymentMatch, type RouteTerms } from './payment-terms.js';
import { ReplayGuard } from './replay-guard.js';
import { resolveSettlementAmount, takeSettlementOverride } from './settlement-amount.js';
import { SellerIdentity } from './seller-identity.js';

export interface X402KoaMiddleware extends Middleware {
  /** The validated configuration. */
  readonly config: ResolvedX402Config;
  /** Resolves when every queued ledger report has finished (for graceful shutdown and tests). */
  flush(): Promise<void>;
}

/** Error codes the middleware answers with (its own responses; the seller app's error handler is not used). */
/** The codes this middleware answers with, from the project's one error list. */
export const X402_MIDDLEWARE_ERRORS = {
  invalid_payment_header: ERROR_CODES.invalid_payment_header,
  seller_misconfigured: ERROR_CODES.seller_misconfigured,
  facilitator_not_configured: ERROR_CODES.facilitator_not_configured,
  settlement_override_invalid: ERROR_CODES.settlement_override_invalid,
} as const;

const silentLogger: X402Logger = { debug() {}, info() {}, warn() {}, error() {} };
const clip = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);

export function x402Koa(options: X402KoaOptions): X402KoaMiddleware {
  const config = resolveX402Options(options);
  const logger = options.logger ?? silentLogger;
  const doFetch = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const metrics = createX402MiddlewareMetrics(options.registry);
  const facilitator = options.facilitator
    ? wrapFacilitatorObject(options.facilitator, {
        verifyTimeoutMs: config.verifyTimeoutMs,
        settleTimeoutMs: config.settleTimeoutMs,
      })
    : config.facilitatorUrl
      ? createFacilitatorClient({
          url: config.facilitatorUrl,
          fetch: doFetch,
          verifyTimeoutMs: config.verifyTimeoutMs,
          settleTimeoutMs: config.settleTimeoutMs,
        })
      : undefined;
  const seller = new SellerIdentity({
    apiUrl: config.apiUrl,
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
  const guard = new ReplayGuard();
  const count = (outcome: RequestOutcome) => metrics.requests.inc({ outcome });

  function priceOf(path: string): bigint {
    return config.routePrices.get(routePriceKey(path)) ?? config.priceMicro;
  }

  function sendError(ctx: Context, code: keyof typeof X402_MIDDLEWARE_ERRORS, fields: Record<string, unknown> = {}) {
    const { status, message } = X402_MIDDLEWARE_ERRORS[code];
    ctx.status = status;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { error_code: code, user_message: message, ...fields };
  }

  function sendChallenge(ctx: Context, terms: RouteTerms, error: string, receipt?: SettlementReceiptInput) {
    const challenge: PaymentRequired = {
      x402Version: 2,
      error: clip(error, 512),
      resource: terms.resource,
      accepts: terms.accepts,
    };
    const header = encodePaymentRequired(challenge);
    ctx.body = challenge;
    ctx.status = 402;
    ctx.set(X402_HEADERS.paymentRequired, header);
    ctx.set(X402_HEADERS.paymentRequiredLegacy, header);
    ctx.set('Cache-Control', 'no-store');
    if (receipt) setReceipt(ctx, receipt);
  }

  function setReceipt(ctx: Context, receipt: SettlementReceiptInput) {
    const header = encodeSettlementReceipt(receipt);
    ctx.set(X402_HEADERS.paymentResponse, header);
    ctx.set(X402_HEADERS.paymentResponseLegacy, header);
  }

  /** Removes every response header the handler added (a discarded paid response must not leak through them). */
  function dropHandlerHeaders(ctx: Context, before: ReadonlySet<string>) {
    for (const name of Object.keys(ctx.response.headers)) if (!before.has(name)) ctx.remove(name);
  }

  function timed<T>(op: 'verify' | 'settle', call: () => Promise<T>): Promise<T> {
    const end = metrics.facilitatorSeconds.startTimer({ op });
    return call().finally(() => end());
  }

  function localOnlyProblem(match: Extract<PaymentMatch, { kind: 'match' }>): string | undefined {
    const now = Math.floor(Date.now() / 1000);
    if (match.validBefore !== undefined && match.validBefore <= now) return 'authorization_expired';
    if (match.validAfter !== undefined && match.validAfter > now) return 'authorization_not_yet_valid';
    return undefined;
  }

  function reportLedger(
    ctx: Context,
    match: Extract<PaymentMatch, { kind: 'match' }>,
    txHash: string,
    endpointId: string | undefined,
    contentHash: string | undefined,
    amount: string,
  ) {
    if (amount === '0' || txHash === '') return; // an upto payment charged nothing: no transfer to record
    ledger.report({
      tx_hash: txHash,
      payer: match.payer,
      amount,
      network: match.requirement.network,
      endpoint_id: endpointId,
      method: ctx.method,
      route: ctx.path,
      content_hash: config.disableBodyCapture ? undefined : contentHash,
      nonce: match.nonce,
    });
  }

  const middleware = async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path === '/health' || ctx.method === 'OPTIONS') return next();
    const price = priceOf(ctx.path);
    if (price === 0n) {
      count('free');
      return next();
    }
    if (!facilitator && !config.allowLocalOnly) {
      count('facilitator_not_configured');
      ctx.set('Retry-After', '5');
      return sendError(ctx, 'facilitator_not_configured');
    }
    const sellerState = await seller.current();
    if (sellerState.kind === 'misconfigured') {
      count('seller_misconfigured');
      return sendError(ctx, 'seller_misconfigured');
    }
    const endpointId = sellerState.endpointId;
    const terms = buildRouteTerms(config, ctx.href, price);

    let payment: PaymentPayload;
    try {
      const header = readPaymentHeader((name) => ctx.req.headers[name]);
      if (header === undefined) {
        count('challenged');
        return sendChallenge(ctx, terms, 'payment_required');
      }
      payment = decodePaymentPayload(header);
    } catch (err) {
      if (!(err instanceof X402DecodeError)) throw err;
      count('invalid_header');
      return sendError(ctx, 'invalid_payment_header', { reason: err.reason, detail: clip(err.message, 300) });
    }

    const match = matchPayment(payment, terms, config);
    if (match.kind === 'mismatch') {
      count('mismatch');
      return sendChallenge(ctx, terms, `no_matching_payment_requirements: ${match.reason}`);
    }
    if (!guard.claim(match.replayKey)) {
      count('replay');
      return sendChallenge(ctx, terms, 'payment_already_used');
    }

    let settled = false;
    try {
      const request: FacilitatorRequest = {
        x402Version: match.x402Version,
        paymentPayload: payment,
        paymentRequirements: match.facilitatorRequirements,
      };
      if (facilitator) {
        const verified = await timed('verify', () => facilitator.verify(request));
        if (verified.kind === 'rejected') {
          count('verify_rejected');
          return sendChallenge(ctx, terms, clip(verified.reason, 256));
        }
        if (verified.kind === 'unavailable') {
          count('facilitator_unavailable');
          logger.warn({ op: 'verify', cause: verified.cause }, 'x402 middleware: facilitator unavailable');
          return sendChallenge(ctx, terms, 'facilitator_unavailable');
        }
      } else {
        const problem = localOnlyProblem(match);
        if (problem) {
          count('mismatch');
          return sendChallenge(ctx, terms, problem);
        }
      }

      const headersBefore = new Set(Object.keys(ctx.response.headers));
      try {
        await next();
      } catch (err) {
        count('handler_failed');
        throw err;
      }
      if (ctx.status >= 400) {
        count('handler_failed');
        return;
      }
      let captured: CapturedBody;
      try {
        captured = await captureBody(ctx, config.maxBodyBytes);
      } catch (err) {
        count('handler_failed');
        throw err;
      }

      if (!facilitator) {
        settled = true;
        guard.settled(match.replayKey, match.validBefore);
        count('local_only_accepted');
        if (captured.kind === 'uncapturable') return;
        setReceipt(ctx, {
          success: true,
          transaction: '',
          txHash: '',
          network: match.requirement.network,
          payer: match.payer,
          errorReason: 'local_only_unverified',
        });
        if (captured.kind === 'bytes' && captured.replacement) ctx.body = captured.replacement;
        if (captured.kind === 'oversize') ctx.body = releaseOversize(captured, () => undefined);
        return;
      }

      // upto: settle what the handler charged (at most the signed maximum); exact: always the price.
      const override = takeSettlementOverride(ctx);
      let settleRequest = request;
      let charged = match.requirement.amount;
      if (match.requirement.scheme === 'upto') {
        const resolved =
          override.kind === 'invalid'
            ? override
            : resolveSettlementAmount(
                override.kind === 'amount' ? override.amount : undefined,
                BigInt(match.requirement.amount),
              );
        if (resolved.kind === 'invalid') {
          count('settlement_override_invalid');
          logger.error({ reason: resolved.reason }, 'x402 middleware: invalid settlement override; nothing settled');
          if (captured.kind === 'uncapturable') return;
          discardBody(captured);
          dropHandlerHeaders(ctx, headersBefore);
          return sendError(ctx, 'settlement_override_invalid', { reason: clip(resolved.reason, 256) });
        }
        charged = resolved.amount.toString();
        settleRequest = { ...request, paymentRequirements: { ...request.paymentRequirements, amount: charged } };
      } else if (override.kind !== 'none') {
        logger.warn(
          { scheme: match.requirement.scheme },
          'x402 middleware: Settlement-Overrides ignored; only upto payments settle less than the price',
        );
      }

      const outcome = await timed('settle', () => facilitator.settle(settleRequest));
      if (outcome.kind !== 'ok') {
        const reason = outcome.kind === 'rejected' ? clip(outcome.reason, 256) : 'facilitator_unavailable';
        if (outcome.kind === 'unavailable')
          logger.warn({ op: 'settle', cause: outcome.cause }, 'x402 middleware: facilitator unavailable');
        count('settle_failed');
        if (captured.kind === 'uncapturable') return; // the body already left; nothing to withdraw
        discardBody(captured);
        dropHandlerHeaders(ctx, headersBefore);
        return sendChallenge(ctx, terms, `settlement_failed: ${reason}`, {
          success: false,
          transaction: '',
          txHash: '',
          network: match.requirement.network,
          payer: match.payer,
          errorReason: reason,
        });
      }

      settled = true;
      guard.settled(match.replayKey, match.validBefore);
      const tx = outcome.settlement.transaction;
      if (captured.kind === 'uncapturable') {
        count('settled_without_receipt');
        logger.warn(
          { why: captured.why },
          'x402 middleware: response bypassed the middleware; settled without a receipt header',
        );
        reportLedger(ctx, match, tx, endpointId, undefined, charged);
        return;
      }
      count('settled');
      setReceipt(ctx, {
        success: true,
        transaction: tx,
        txHash: tx,
        network: outcome.settlement.network ?? match.requirement.network,
        payer: match.payer,
        ...(match.requirement.scheme === 'upto' ? { amount: outcome.settlement.amount ?? charged } : {}),
      });
      if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', 'private');
      if (captured.kind === 'oversize') {
        ctx.body = releaseOversize(captured, (hash) => reportLedger(ctx, match, tx, endpointId, hash, charged));
        return;
      }
      const bytes = captured.kind === 'bytes' ? captured.bytes : Buffer.alloc(0);
      if (captured.kind === 'bytes' && captured.replacement) ctx.body = captured.replacement;
      reportLedger(ctx, match, tx, endpointId, config.disableBodyCapture ? undefined : sha256Hex(bytes), charged);
    } finally {
      if (!settled) guard.release(match.replayKey);
    }
  };

  return Object.assign(middleware, { config, flush: () => ledger.flush() });
}
