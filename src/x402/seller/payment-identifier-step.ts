/**
 * The paywall's two calls into the `payment-identifier` rule (./payment-identifier-rule.ts), kept out of
 * ./paid-request.ts: before the replay guard, look the payment's id up (answering a retry, a conflict or an
 * unreachable store itself); after settlement, keep the answer for the claim.
 *
 * Defends against: the same as the rule. Does not defend against: a paywall built without a store (ids are
 * then read and refused when malformed or missing, but nothing is deduplicated).
 */
import type { PaymentPayload } from '../wire-schemas.js';
import type { RequestOutcome } from './middleware-metrics.js';
import type { HeldResponse, PaidRequest, PaidRequestPort, PaidSite } from './paid-request-port.js';
import {
  answerToStore,
  claimPaymentIdentifier,
  completeClaim,
  replayStoredAnswer,
  type IdClaim,
  type IdReading,
} from './payment-identifier-rule.js';
import type { PaymentIdentifierStore } from './payment-identifier-store.js';
import type { PaymentMatch } from './payment-terms.js';
import type { SellerState } from './seller-identity.js';
import type { ResolvedX402Config } from './seller-options.js';
import type { X402Logger } from './x402-koa-options.js';

export interface IdStepInput {
  req: PaidRequest;
  port: PaidRequestPort;
  payment: PaymentPayload;
  match: Extract<PaymentMatch, { kind: 'match' }>;
  reading: IdReading;
  count: (outcome: RequestOutcome) => void;
}

/** No id (undefined), a new claim the caller owns, or `answered` (a replay, a 409 or a 503 went out). */
export async function applyPaymentIdentifier(
  store: PaymentIdentifierStore | undefined,
  site: PaidSite,
  seller: Exclude<SellerState, { kind: 'misconfigured' }>,
  at: IdStepInput,
): Promise<IdClaim | undefined | 'answered'> {
  if (at.reading.kind !== 'id' || !store) return undefined;
  const claimed = await claimPaymentIdentifier({
    store,
    scope: site.paymentIdScope ?? (seller.kind === 'verified' ? seller.sellerId : ''),
    id: at.reading.id,
    req: at.req,
    payment: at.payment,
    match: at.match,
    // A claim outlives its payment's validity window and the facilitator's calls; then it frees itself.
    pendingTtlSeconds: site.config.maxTimeoutSeconds + 120,
  });
  if (claimed.kind === 'claimed') return claimed.claim;
  if (claimed.kind === 'replay') {
    at.count('payment_id_replayed');
    replayStoredAnswer(at.port, claimed.answer);
  } else {
    at.count(claimed.outcome);
    at.port.answer(claimed.answer);
  }
  return 'answered';
}

/** The settled answer, kept for the claim (a streamed or too large body: the receipt only). */
export async function keepSettledAnswer(
  claim: IdClaim,
  config: ResolvedX402Config,
  held: HeldResponse,
  receipt: Record<string, string>,
  logger: X402Logger,
): Promise<void> {
  const { captured } = held;
  const body = captured.kind === 'bytes' ? captured.bytes : captured.kind === 'empty' ? Buffer.alloc(0) : undefined;
  const work = held.headers();
  const kept = { ...work, 'cache-control': work['cache-control'] ?? 'private' };
  const answer = answerToStore(held.status, kept, receipt, body, config.paymentIdentifier.max_answer_bytes);
  await completeClaim(claim, answer, (obj, msg) => logger.warn(obj, msg));
}
