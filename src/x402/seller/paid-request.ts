/**
 * The seller's paywall, free of any web framework: one paid request from the payment header to the receipt,
 * shared by the Koa middleware (../koa/x402-koa.ts) and the gate (src/gate/), which differ only in how they
 * read a request, run the paid work (a Koa handler; a proxied origin) and write an answer — the `PaidRequestPort`
 * each gives. The challenges, error answers and receipt headers it writes are built in paywall-answers.ts.
 * The rules (docs/seller-middleware.md#rules-and-runtime-answers), in order:
 *   1. Before any payment (unpaid-pass.ts): a free route (price 0) passes on every method, OPTIONS included;
 *      OPTIONS to a priced route is answered here — 204 with the CORS preflight headers (cors-preflight.ts) — and
 *      the paid work never runs for it (a preflight cannot carry a payment); on a site that lets the probe through
 *      (the Koa middleware), a bodiless GET or HEAD of `/health` passes unless `route_prices` prices it. Anything
 *      else is priced, `/health` included.
 *   2. No facilitator and XX_ALLOW_LOCAL_ONLY≠1 → 503, `Retry-After: 5` (a Solana offer always has one; a
 *      Solana-only seller whose facilitator names no fee payer yet answers the same).
 *   3. The seller is not usable (a refused PAT, an ambiguous endpoint set, a suspended seller) → 500
 *      `seller_misconfigured`.
 *   4. No payment header → 402 challenge (`PAYMENT-REQUIRED` + `X-PAYMENT-REQUIRED`, same JSON as the body,
 *      `Cache-Control: no-store`). Undecodable header → 400 `invalid_payment_header`.
 *   5. Payment for other terms, or already in flight / settled in this process → 402 re-issued with an error.
 *      Before the guard, a `payment-identifier` id is looked up (payment-identifier-rule.ts): a retry is answered.
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
 * The facilitator asked is the one of the network the buyer chose (`accepted.network`): the Solana offer's for a
 * Solana payment, the EVM one otherwise.
 *
 * Defends against: serving paid content without a settled payment (verify before, settle after, body held);
 * a facilitator outage becoming a free pass (every failure is a 402); double use of one payment within the
 * process (replay-guard.ts); hostile headers (decoders refuse them with 400 before the paid work runs).
 * Does not defend against: replays across processes (the token's on-chain nonce is the final guard); a
 * dishonest facilitator; paid work that bypasses its adapter (the body leaves unheld: settled, no receipt).
 */
import type { FacilitatorClient as Facilitator, FacilitatorRequest } from '../facilitator-client.js';
import { decodePaymentPayload, readPaymentHeader } from '../header-codec.js';
import type { PaymentPayload } from '../wire-schemas.js';
import { X402DecodeError } from '../x402-decode-error.js';
import { discardBody, releaseOversize } from './held-body.js';
import type { RequestOutcome } from './middleware-metrics.js';
import { bodySha256 } from './payment-identifier-fingerprint.js';
import { matchPayment, type PaymentMatch, type RouteTerms } from './payment-terms.js';
import { challengeAnswer, clip, errorAnswer, receiptHeaders } from './paywall-answers.js';
import { RouteTermsCache } from './route-terms-cache.js';
import type { ResolvedX402Config } from './seller-options.js';
import { unpaidPass } from './unpaid-pass.js';
import { isSolanaNetwork } from './solana-offer.js';
import { resolveSettlementAmount } from './settlement-amount.js';
import { localOnlyProblem } from './local-only-window.js';
import { readPaymentIdentifier, releaseClaim, type IdClaim } from './payment-identifier-rule.js';
import { applyPaymentIdentifier, keepSettledAnswer } from './payment-identifier-step.js';
import type { HeldResponse, PaidRequest, PaidRequestDeps, PaidRequestPort, PaidSite } from './paid-request-port.js';

export type { PaywallAnswer } from './paywall-answers.js';
export type { HeldResponse, PaidRequest, PaidRequestDeps, PaidRequestPort, PaidSite } from './paid-request-port.js';

export { priceOf } from './route-price.js';
export { HEALTH_PATH } from './unpaid-pass.js';

type Match = Extract<PaymentMatch, { kind: 'match' }>;
type SettleOutcome = Awaited<ReturnType<Facilitator['settle']>>;

/** A claimed payment on its way through rules 6 to 8; `settled` once it may no longer be released. */
interface Paid {
  config: ResolvedX402Config;
  /** The facilitator of the network the payment is on (undefined: local-only mode). */
  facilitator: Facilitator | undefined;
  req: PaidRequest;
  port: PaidRequestPort;
  terms: RouteTerms;
  match: Match;
  endpointId: string | undefined;
  settled: boolean;
  /** The payment's `payment-identifier` claim; `idKept` once settled (the claim is then not released). */
  idClaim: IdClaim | undefined;
  idKept: boolean;
}

/** The paywall: `handle(site, request, port)` walks one request through the rules above. */
export class PaidRequestCore {
  private readonly terms: RouteTermsCache; // built once per route (./route-terms-cache.ts)
  constructor(private readonly deps: PaidRequestDeps) {
    this.terms = new RouteTermsCache(deps);
  }

  private count(outcome: RequestOutcome): void {
    this.deps.metrics.requests.inc({ outcome });
  }
  private readonly countOutcome = (outcome: RequestOutcome) => this.count(outcome);

  /** `call`, its duration observed in seconds (one observation, no timer object: prom-client's costs 0.9 µs). */
  private timed<T>(op: 'verify' | 'settle', call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const { facilitatorSeconds } = this.deps.metrics;
    return call().finally(() => facilitatorSeconds.observe({ op }, (performance.now() - started) / 1000));
  }

  private report(
    { config, req, match, endpointId }: Paid,
    txHash: string,
    contentHash: string | undefined,
    amount: string,
  ) {
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
    const unpaid = unpaidPass(config, req, site.healthProbe === true);
    if (unpaid.kind === 'free') {
      this.count('free');
      return port.pass();
    }
    if (unpaid.kind === 'probe') return port.pass();
    if (unpaid.kind === 'preflight') return port.answer({ status: 204, headers: unpaid.headers, body: undefined });
    const { price } = unpaid;
    if (!this.deps.facilitator && !this.deps.solanaFacilitator && !config.allowLocalOnly) {
      this.count('facilitator_not_configured');
      return port.answer(errorAnswer('facilitator_not_configured', {}, { 'Retry-After': '5' }));
    }
    const sellerState = await site.seller();
    if (sellerState.kind === 'misconfigured') {
      this.count('seller_misconfigured');
      return port.answer(errorAnswer('seller_misconfigured'));
    }
    const terms = await this.terms.termsFor(site, req, price, sellerState);
    if (!terms) {
      this.count('facilitator_not_configured');
      return port.answer(errorAnswer('facilitator_not_configured', {}, { 'Retry-After': '5' }));
    }
    const payment = this.readPayment(req, terms, port);
    if (!payment) return;
    const idReading = readPaymentIdentifier(payment, config.paymentIdentifier.required);
    if (idReading.kind === 'refused') {
      this.count('payment_id_refused');
      return port.answer(idReading.answer);
    }
    const match = matchPayment(payment, terms, config);
    if (match.kind === 'mismatch') {
      this.count('mismatch');
      return port.answer(challengeAnswer(terms, `no_matching_payment_requirements: ${match.reason}`));
    }
    const idAt = { req, port, payment, match, reading: idReading, count: this.countOutcome };
    // Without an id there is nothing to look up: no call, no await.
    const idClaim =
      idReading.kind === 'id' ? await applyPaymentIdentifier(this.deps.paymentIds, site, sellerState, idAt) : undefined;
    if (idClaim === 'answered') return;
    if (!this.deps.guard.claim(match.replayKey)) {
      if (idClaim) releaseClaim(idClaim);
      this.count('replay');
      return port.answer(challengeAnswer(terms, 'payment_already_used'));
    }
    const facilitator = this.facilitatorOf(match.requirement.network); // the claim: released unless settled
    const paid: Paid = {
      config,
      facilitator,
      req,
      port,
      terms,
      match,
      endpointId: sellerState.endpointId,
      settled: false,
      idClaim,
      idKept: false,
    };
    try {
      await this.verifyRunSettle(paid, {
        x402Version: match.x402Version,
        paymentPayload: payment,
        paymentRequirements: match.facilitatorRequirements,
      });
    } finally {
      if (!paid.settled) this.deps.guard.release(match.replayKey);
      if (idClaim && !paid.idKept) releaseClaim(idClaim);
    }
  }

  /** The facilitator of `network`: the Solana offer's for its network, the EVM one otherwise. */
  private facilitatorOf(network: string): Facilitator | undefined {
    const { solanaFacilitator } = this.deps;
    return solanaFacilitator && isSolanaNetwork(network) ? solanaFacilitator : this.deps.facilitator;
  }

  /** Rule 4: the payment header, decoded; undefined once answered (no header: a challenge; undecodable: 400). */
  private readPayment(req: PaidRequest, terms: RouteTerms, port: PaidRequestPort): PaymentPayload | undefined {
    try {
      const header = readPaymentHeader((name) => req.header(name));
      if (header === undefined) {
        this.count('challenged');
        port.answer(this.terms.paymentRequired(terms));
        return undefined;
      }
      return decodePaymentPayload(header);
    } catch (err) {
      if (!(err instanceof X402DecodeError)) throw err;
      this.count('invalid_header');
      port.answer(errorAnswer('invalid_payment_header', { reason: err.reason, detail: clip(err.message, 300) }));
      return undefined;
    }
  }

  /** Rules 6 to 8 (or local-only mode) for a claimed payment. */
  private async verifyRunSettle(paid: Paid, request: FacilitatorRequest): Promise<void> {
    const { facilitator } = paid;
    if (!(await this.verified(paid, request))) return;
    let held: HeldResponse | 'failed';
    try {
      held = await paid.port.run();
    } catch (err) {
      this.count('handler_failed');
      throw err;
    }
    if (held === 'failed') {
      this.count('handler_failed');
      return;
    }
    if (!facilitator) return this.acceptLocalOnly(paid, held);
    const settlement = this.settlementFor(paid, request, held);
    if (!settlement) return;
    const outcome = await this.timed('settle', () => facilitator.settle(settlement.request));
    if (outcome.kind !== 'ok') return this.settleFailed(paid, held, outcome);
    paid.settled = true;
    paid.idKept = true;
    this.deps.guard.settled(paid.match.replayKey, paid.match.validBefore);
    await this.releaseSettled(paid, held, outcome.settlement, settlement.charged);
  }

  /** Rule 6: the facilitator verifies (local-only: the validity window only); false once answered. */
  private async verified({ port, terms, match, facilitator }: Paid, request: FacilitatorRequest): Promise<boolean> {
    const { logger } = this.deps;
    if (!facilitator) {
      const problem = localOnlyProblem(match);
      if (!problem) return true;
      this.count('mismatch');
      port.answer(challengeAnswer(terms, problem));
      return false;
    }
    const verified = await this.timed('verify', () => facilitator.verify(request));
    if (verified.kind === 'rejected') {
      this.count('verify_rejected');
      port.answer(challengeAnswer(terms, clip(verified.reason, 256)));
      return false;
    }
    if (verified.kind === 'unavailable') {
      this.count('facilitator_unavailable');
      logger.warn({ op: 'verify', cause: verified.cause }, 'x402 middleware: facilitator unavailable');
      port.answer(challengeAnswer(terms, 'facilitator_unavailable'));
      return false;
    }
    return true;
  }

  /** Local-only mode: accepted unverified and unsettled; the receipt says so. */
  private acceptLocalOnly(paid: Paid, held: HeldResponse): void {
    const { captured } = held;
    const { match } = paid;
    paid.settled = true;
    this.deps.guard.settled(match.replayKey, match.validBefore);
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

  /**
   * What to settle. upto: what the paid work charged (at most the signed maximum; an invalid override settles
   * nothing and answers 500); exact: always the price. Undefined once answered.
   */
  private settlementFor(
    { port, match }: Paid,
    request: FacilitatorRequest,
    held: HeldResponse,
  ): { request: FacilitatorRequest; charged: string } | undefined {
    const { logger } = this.deps;
    const { override, captured } = held;
    if (match.requirement.scheme !== 'upto') {
      if (override.kind !== 'none')
        logger.warn(
          { scheme: match.requirement.scheme },
          'x402 middleware: Settlement-Overrides ignored; only upto payments settle less than the price',
        );
      return { request, charged: match.requirement.amount };
    }
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
      if (captured.kind === 'uncapturable') return undefined;
      discardBody(captured);
      held.dropHeaders();
      port.answer(errorAnswer('settlement_override_invalid', { reason: clip(resolved.reason, 256) }));
      return undefined;
    }
    const charged = resolved.amount.toString();
    return {
      request: { ...request, paymentRequirements: { ...request.paymentRequirements, amount: charged } },
      charged,
    };
  }

  /** Settlement failed or the facilitator is down: the held body and headers discarded, 402 with a failed receipt. */
  private settleFailed(
    { port, terms, match }: Paid,
    held: HeldResponse,
    outcome: Exclude<SettleOutcome, { kind: 'ok' }>,
  ): void {
    const reason = outcome.kind === 'rejected' ? clip(outcome.reason, 256) : 'facilitator_unavailable';
    if (outcome.kind === 'unavailable')
      this.deps.logger.warn({ op: 'settle', cause: outcome.cause }, 'x402 middleware: facilitator unavailable');
    this.count('settle_failed');
    const { captured } = held;
    if (captured.kind === 'uncapturable') return; // the body already left; nothing to withdraw
    discardBody(captured);
    held.dropHeaders();
    port.answer(
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

  /** Settled: the answer kept for its payment-identifier, then released with its receipt, the ledger row reported. */
  private async releaseSettled(
    paid: Paid,
    held: HeldResponse,
    settlement: Extract<SettleOutcome, { kind: 'ok' }>['settlement'],
    charged: string,
  ): Promise<void> {
    const { config, match } = paid;
    const { captured } = held;
    const tx = settlement.transaction;
    const headers = receiptHeaders({
      success: true,
      transaction: tx,
      txHash: tx,
      network: settlement.network ?? match.requirement.network,
      payer: match.payer,
      ...(match.requirement.scheme === 'upto' ? { amount: settlement.amount ?? charged } : {}),
    });
    if (paid.idClaim) await keepSettledAnswer(paid.idClaim, config, held, headers, this.deps.logger);
    if (captured.kind === 'uncapturable') {
      this.count('settled_without_receipt');
      this.deps.logger.warn(
        { why: captured.why },
        'x402 middleware: response bypassed the middleware; settled without a receipt header',
      );
      this.report(paid, tx, undefined, charged);
      return;
    }
    this.count('settled');
    if (captured.kind === 'oversize') {
      const stream = releaseOversize(captured, (hash) => this.report(paid, tx, hash, charged));
      return held.release(headers, stream, 'private');
    }
    const bytes = captured.kind === 'bytes' ? captured.bytes : Buffer.alloc(0);
    held.release(headers, captured.kind === 'bytes' ? captured.replacement : undefined, 'private');
    const contentHash = config.disableBodyCapture ? undefined : bodySha256(bytes);
    this.report(paid, tx, contentHash, charged);
  }
}
