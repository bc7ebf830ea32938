/**
 * The seller's paywall, free of any web framework: one paid request from the payment header to the receipt,
 * shared by the Koa middleware (../koa/x402-koa.ts) and the gate (src/gate/), which differ only in how they
 * read a request, run the paid work (a Koa handler; a proxied origin) and write an answer — the `PaidRequestPort`
 * each gives. The challenges, error answers and receipt headers it writes are built in paywall-answers.ts; rule 8 and
 * local-only mode (settle, release or withdraw the held answer) are settle-step.ts's, over the claimed payment of
 * paid-flight.ts.
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
import type { RequestOutcome } from './middleware-metrics.js';
import type { Paid, StepContext } from './paid-flight.js';
import { matchPayment, type RouteTerms } from './payment-terms.js';
import { challengeAnswer, clip, errorAnswer } from './paywall-answers.js';
import { RouteTermsCache } from './route-terms-cache.js';
import { unpaidPass } from './unpaid-pass.js';
import { isSolanaNetwork } from './solana-offer.js';
import { localOnlyProblem } from './local-only-window.js';
import { readPaymentIdentifier, releaseClaim } from './payment-identifier-rule.js';
import { applyPaymentIdentifier } from './payment-identifier-step.js';
import { acceptLocalOnly, releaseSettled, settleFailed, settlementFor } from './settle-step.js';
import type { HeldResponse, PaidRequest, PaidRequestDeps, PaidRequestPort, PaidSite } from './paid-request-port.js';

export type { PaywallAnswer } from './paywall-answers.js';
export type { HeldResponse, PaidRequest, PaidRequestDeps, PaidRequestPort, PaidSite } from './paid-request-port.js';

export { priceOf } from './route-price.js';
export { HEALTH_PATH } from './unpaid-pass.js';

/** The paywall: `handle(site, request, port)` walks one request through the rules above. */
export class PaidRequestCore {
  private readonly terms: RouteTermsCache; // built once per route (./route-terms-cache.ts)
  private readonly step: StepContext; // what the steps after the paid work use (./settle-step.ts)
  constructor(private readonly deps: PaidRequestDeps) {
    this.terms = new RouteTermsCache(deps);
    this.step = { deps, count: this.countOutcome };
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
    if (!facilitator) return acceptLocalOnly(this.step, paid, held);
    const settlement = settlementFor(this.step, paid, request, held);
    if (!settlement) return;
    const outcome = await this.timed('settle', () => facilitator.settle(settlement.request));
    if (outcome.kind !== 'ok') return settleFailed(this.step, paid, held, outcome);
    paid.settled = true;
    paid.idKept = true;
    this.deps.guard.settled(paid.match.replayKey, paid.match.validBefore);
    await releaseSettled(this.step, paid, held, outcome.settlement, settlement.charged);
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
}
