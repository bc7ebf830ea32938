/**
 * The seller's paywall, free of any web framework: one paid request from the payment header to the receipt,
 * shared by the Koa middleware (../koa/x402-koa.ts) and the gate (src/gate/), which differ only in how they
 * read a request, run the paid work (a Koa handler; a proxied origin) and write an answer — the `PaidRequestPort`
 * each gives. The challenges, error answers and receipt headers it writes are built in paywall-answers.ts.
 * The rules (docs/seller-middleware.md#rules-and-runtime-answers), in order:
 *   1. `/health`, OPTIONS (CORS preflights cannot carry a payment) and free routes (price 0) pass through.
 *   2. No facilitator and XX_ALLOW_LOCAL_ONLY≠1 → 503, `Retry-After: 5`.
 *   3. The seller is not usable (a refused PAT, an ambiguous endpoint set, a suspended seller) → 500
 *      `seller_misconfigured`.
 *   4. No payment header → 402 challenge (`PAYMENT-REQUIRED` + `X-PAYMENT-REQUIRED`, same JSON as the body,
 *      `Cache-Control: no-store`). Undecodable header → 400 `invalid_payment_header`.
 *   5. Payment for other terms, or already in flight / settled in this process → 402 re-issued with an error.
 *   6. Facilitator verify: invalid, unreachable, slow, 5xx or malformed → 402 re-issued. The paid work never runs.
 *   7. The paid work runs. Throws, status ≥ 400 or (gate) an unreachable origin → its answer goes out as is,
 *      nothing is settled.
 *   8. The body is held (held-body.ts), then settled — for `upto`, the amount named in `Settlement-Overrides`
 *      (at most the signed maximum; invalid → 500 `settlement_override_invalid`, nothing settled), else the
 *      maximum. Success → body released with the receipt on `PAYMENT-RESPONSE` + `X-PAYMENT-RESPONSE`, ledger
 *      row (with the body's sha256) reported in the background. Failure or facilitator down → body and the
 *      paid work's headers discarded, 402 re-issued with a `success:false` receipt.
 *   Local-only mode (no facilitator, XX_ALLOW_LOCAL_ONLY=1): a well-formed payment for the right terms inside its
 *   validity window is accepted without verification or settlement; the receipt has an empty transaction and
 *   `errorReason: "local_only_unverified"`; no ledger row is reported.
 *
 * Defends against: serving paid content without a settled payment (verify before, settle after, body held);
 * a facilitator outage becoming a free pass (every failure is a 402); double use of one payment within the
 * process (replay-guard.ts); hostile headers (decoders refuse them with 400 before the paid work runs).
 * Does not defend against: replays across processes (the token's on-chain nonce is the final guard); a
 * dishonest facilitator; paid work that bypasses its adapter (the body leaves unheld: settled, no receipt).
 */
import type { Readable } from 'node:stream';
import type { FacilitatorClient as Facilitator, FacilitatorRequest } from '../facilitator-client.js';
import { decodePaymentPayload, readPaymentHeader } from '../header-codec.js';
import type { PaymentPayload } from '../wire-schemas.js';
import { X402DecodeError } from '../x402-decode-error.js';
import { discardBody, releaseOversize, sha256Hex, type CapturedBody } from './held-body.js';
import type { LedgerReporter } from './ledger-reporter.js';
import type { RequestOutcome, X402MiddlewareMetrics } from './middleware-metrics.js';
import { buildRouteTerms, matchPayment, type PaymentMatch } from './payment-terms.js';
import { challengeAnswer, clip, errorAnswer, receiptHeaders, type PaywallAnswer } from './paywall-answers.js';
import type { ReplayGuard } from './replay-guard.js';
import type { SellerState } from './seller-identity.js';
import { routePriceKey, type ResolvedX402Config, type X402Logger } from './seller-options.js';
import { resolveSettlementAmount, type SettlementOverride } from './settlement-amount.js';

export type { PaywallAnswer } from './paywall-answers.js';

/** What the paywall reads of a request. */
export interface PaidRequest {
  method: string;
  /** The path as the seller prices and reports it (the origin's path behind the gate). */
  path: string;
  /** The URL the buyer asked for: the challenge's resource. */
  href: string;
  header(name: string): string | string[] | undefined;
}

/** One seller's terms: its configuration and where its current state comes from. */
export interface PaidSite {
  config: ResolvedX402Config;
  seller(): Promise<SellerState> | SellerState;
}

/** The paid work's response, held by the adapter until the paywall settles or discards it. */
export interface HeldResponse {
  captured: CapturedBody;
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
  /** Let the request through unpaid (health, OPTIONS, a free route). */
  pass(): Promise<void>;
  /** Answer without running the paid work (a challenge or an error). */
  answer(answer: PaywallAnswer): void;
  /**
   * Run the paid work. `failed`: its answer (status ≥ 400, an unreachable origin) goes out as the adapter
   * wrote it and nothing is settled. A throw propagates (nothing settled).
   */
  run(): Promise<HeldResponse | 'failed'>;
}

export interface PaidRequestDeps {
  facilitator: Facilitator | undefined;
  ledger: LedgerReporter;
  guard: ReplayGuard;
  metrics: X402MiddlewareMetrics;
  logger: X402Logger;
}

/** Rule 1's unpaid pass-through: `/health` and OPTIONS (a CORS preflight cannot carry a payment). */
export function passesUnpaid(method: string, path: string): boolean {
  return path === '/health' || method === 'OPTIONS';
}

export function priceOf(config: ResolvedX402Config, path: string): bigint {
  return config.routePrices.get(routePriceKey(path)) ?? config.priceMicro;
}

type Match = Extract<PaymentMatch, { kind: 'match' }>;

function localOnlyProblem(match: Match): string | undefined {
  const now = Math.floor(Date.now() / 1000);
  if (match.validBefore !== undefined && match.validBefore <= now) return 'authorization_expired';
  if (match.validAfter !== undefined && match.validAfter > now) return 'authorization_not_yet_valid';
  return undefined;
}

/** The paywall: `handle(site, request, port)` walks one request through the rules above. */
export class PaidRequestCore {
  constructor(private readonly deps: PaidRequestDeps) {}

  private count(outcome: RequestOutcome): void {
    this.deps.metrics.requests.inc({ outcome });
  }

  private timed<T>(op: 'verify' | 'settle', call: () => Promise<T>): Promise<T> {
    const end = this.deps.metrics.facilitatorSeconds.startTimer({ op });
    return call().finally(() => end());
  }

  private report(
    config: ResolvedX402Config,
    req: PaidRequest,
    match: Match,
    txHash: string,
    endpointId: string | undefined,
    contentHash: string | undefined,
    amount: string,
  ): void {
    if (amount === '0' || txHash === '') return; // an upto payment charged nothing: no transfer to record
    this.deps.ledger.report({
      tx_hash: txHash,
      payer: match.payer,
      amount,
      network: match.requirement.network,
      endpoint_id: endpointId,
      method: req.method,
      route: req.path,
      content_hash: config.disableBodyCapture ? undefined : contentHash,
      nonce: match.nonce,
    });
  }

  async handle(site: PaidSite, req: PaidRequest, port: PaidRequestPort): Promise<void> {
    const { config } = site;
    const { facilitator, guard, logger } = this.deps;
    if (passesUnpaid(req.method, req.path)) return port.pass();
    const price = priceOf(config, req.path);
    if (price === 0n) {
      this.count('free');
      return port.pass();
    }
    if (!facilitator && !config.allowLocalOnly) {
      this.count('facilitator_not_configured');
      return port.answer(errorAnswer('facilitator_not_configured', {}, { 'Retry-After': '5' }));
    }
    const sellerState = await site.seller();
    if (sellerState.kind === 'misconfigured') {
      this.count('seller_misconfigured');
      return port.answer(errorAnswer('seller_misconfigured'));
    }
    const endpointId = sellerState.endpointId;
    const terms = buildRouteTerms(
      config,
      req.href,
      price,
      sellerState.kind === 'verified' ? (sellerState.payTo ?? config.payTo) : config.payTo,
    );

    let payment: PaymentPayload;
    try {
      const header = readPaymentHeader((name) => req.header(name));
      if (header === undefined) {
        this.count('challenged');
        return port.answer(challengeAnswer(terms, 'payment_required'));
      }
      payment = decodePaymentPayload(header);
    } catch (err) {
      if (!(err instanceof X402DecodeError)) throw err;
      this.count('invalid_header');
      return port.answer(errorAnswer('invalid_payment_header', { reason: err.reason, detail: clip(err.message, 300) }));
    }

    const match = matchPayment(payment, terms, config);
    if (match.kind === 'mismatch') {
      this.count('mismatch');
      return port.answer(challengeAnswer(terms, `no_matching_payment_requirements: ${match.reason}`));
    }
    if (!guard.claim(match.replayKey)) {
      this.count('replay');
      return port.answer(challengeAnswer(terms, 'payment_already_used'));
    }

    let settled = false;
    try {
      const request: FacilitatorRequest = {
        x402Version: match.x402Version,
        paymentPayload: payment,
        paymentRequirements: match.facilitatorRequirements,
      };
      if (facilitator) {
        const verified = await this.timed('verify', () => facilitator.verify(request));
        if (verified.kind === 'rejected') {
          this.count('verify_rejected');
          return port.answer(challengeAnswer(terms, clip(verified.reason, 256)));
        }
        if (verified.kind === 'unavailable') {
          this.count('facilitator_unavailable');
          logger.warn({ op: 'verify', cause: verified.cause }, 'x402 middleware: facilitator unavailable');
          return port.answer(challengeAnswer(terms, 'facilitator_unavailable'));
        }
      } else {
        const problem = localOnlyProblem(match);
        if (problem) {
          this.count('mismatch');
          return port.answer(challengeAnswer(terms, problem));
        }
      }

      let held: HeldResponse | 'failed';
      try {
        held = await port.run();
      } catch (err) {
        this.count('handler_failed');
        throw err;
      }
      if (held === 'failed') {
        this.count('handler_failed');
        return;
      }
      const { captured } = held;

      if (!facilitator) {
        settled = true;
        guard.settled(match.replayKey, match.validBefore);
        this.count('local_only_accepted');
        if (captured.kind === 'uncapturable') return;
        const headers = receiptHeaders({
          success: true,
          transaction: '',
          txHash: '',
          network: match.requirement.network,
          payer: match.payer,
          errorReason: 'local_only_unverified',
        });
        if (captured.kind === 'oversize')
          return held.release(
            headers,
            releaseOversize(captured, () => undefined),
          );
        return held.release(headers, captured.kind === 'bytes' ? captured.replacement : undefined);
      }

      // upto: settle what the paid work charged (at most the signed maximum); exact: always the price.
      const override = held.override;
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
          this.count('settlement_override_invalid');
          logger.error({ reason: resolved.reason }, 'x402 middleware: invalid settlement override; nothing settled');
          if (captured.kind === 'uncapturable') return;
          discardBody(captured);
          held.dropHeaders();
          return port.answer(errorAnswer('settlement_override_invalid', { reason: clip(resolved.reason, 256) }));
        }
        charged = resolved.amount.toString();
        settleRequest = { ...request, paymentRequirements: { ...request.paymentRequirements, amount: charged } };
      } else if (override.kind !== 'none') {
        logger.warn(
          { scheme: match.requirement.scheme },
          'x402 middleware: Settlement-Overrides ignored; only upto payments settle less than the price',
        );
      }

      const outcome = await this.timed('settle', () => facilitator.settle(settleRequest));
      if (outcome.kind !== 'ok') {
        const reason = outcome.kind === 'rejected' ? clip(outcome.reason, 256) : 'facilitator_unavailable';
        if (outcome.kind === 'unavailable')
          logger.warn({ op: 'settle', cause: outcome.cause }, 'x402 middleware: facilitator unavailable');
        this.count('settle_failed');
        if (captured.kind === 'uncapturable') return; // the body already left; nothing to withdraw
        discardBody(captured);
        held.dropHeaders();
        return port.answer(
          challengeAnswer(terms, `settlement_failed: ${reason}`, {
            success: false,
            transaction: '',
            txHash: '',
            network: match.requirement.network,
            payer: match.payer,
            errorReason: reason,
          }),
        );
      }

      settled = true;
      guard.settled(match.replayKey, match.validBefore);
      const tx = outcome.settlement.transaction;
      if (captured.kind === 'uncapturable') {
        this.count('settled_without_receipt');
        logger.warn(
          { why: captured.why },
          'x402 middleware: response bypassed the middleware; settled without a receipt header',
        );
        this.report(config, req, match, tx, endpointId, undefined, charged);
        return;
      }
      this.count('settled');
      const headers = receiptHeaders({
        success: true,
        transaction: tx,
        txHash: tx,
        network: outcome.settlement.network ?? match.requirement.network,
        payer: match.payer,
        ...(match.requirement.scheme === 'upto' ? { amount: outcome.settlement.amount ?? charged } : {}),
      });
      if (captured.kind === 'oversize') {
        const stream = releaseOversize(captured, (hash) =>
          this.report(config, req, match, tx, endpointId, hash, charged),
        );
        return held.release(headers, stream, 'private');
      }
      const bytes = captured.kind === 'bytes' ? captured.bytes : Buffer.alloc(0);
      held.release(headers, captured.kind === 'bytes' ? captured.replacement : undefined, 'private');
      this.report(
        config,
        req,
        match,
        tx,
        endpointId,
        config.disableBodyCapture ? undefined : sha256Hex(bytes),
        charged,
      );
    } finally {
      if (!settled) guard.release(match.replayKey);
    }
  }
}
