/**
 * The paywall's rule 8 and local-only mode (./paid-request.ts): after the paid work ran, what is settled, and the
 * held answer released with its receipt or withdrawn for a 402.
 *
 * Defends: paid content leaving without a settled payment (a failed or unreachable settlement discards the held body
 * and headers and answers 402 with a failed receipt); settling more than the buyer signed for (an upto override is
 * bounded by the signed maximum; an invalid one settles nothing); a ledger row for a transfer that did not happen
 * (no row for an unsettled, local-only or zero-amount payment). Does not defend: a body that bypassed its adapter
 * (settled without a receipt, counted and logged).
 */
import type { FacilitatorRequest } from '../facilitator-client.js';
import { discardBody, releaseOversize } from './held-body.js';
import type { Paid, SettleOutcome, StepContext } from './paid-flight.js';
import type { HeldResponse } from './paid-request-port.js';
import { bodySha256 } from './payment-identifier-fingerprint.js';
import { keepSettledAnswer } from './payment-identifier-step.js';
import { challengeAnswer, clip, errorAnswer, receiptHeaders } from './paywall-answers.js';
import { resolveSettlementAmount } from './settlement-amount.js';

/** The ledger row of a settled transfer, reported in the background. */
function reportLedger(
  ctx: StepContext,
  { config, req, match, endpointId }: Paid,
  txHash: string,
  contentHash: string | undefined,
  amount: string,
) {
  if (amount === '0' || txHash === '') return; // an upto payment charged nothing: no transfer to record
  ctx.deps.ledger.report({
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

/** Local-only mode: accepted unverified and unsettled; the receipt says so. */
export function acceptLocalOnly(ctx: StepContext, paid: Paid, held: HeldResponse): void {
  const { captured } = held;
  const { match } = paid;
  paid.settled = true;
  ctx.deps.guard.settled(match.replayKey, match.validBefore);
  ctx.count('local_only_accepted');
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
export function settlementFor(
  ctx: StepContext,
  { port, match }: Paid,
  request: FacilitatorRequest,
  held: HeldResponse,
): { request: FacilitatorRequest; charged: string } | undefined {
  const { logger } = ctx.deps;
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
    ctx.count('settlement_override_invalid');
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
export function settleFailed(
  ctx: StepContext,
  { port, terms, match }: Paid,
  held: HeldResponse,
  outcome: Exclude<SettleOutcome, { kind: 'ok' }>,
): void {
  const reason = outcome.kind === 'rejected' ? clip(outcome.reason, 256) : 'facilitator_unavailable';
  if (outcome.kind === 'unavailable')
    ctx.deps.logger.warn({ op: 'settle', cause: outcome.cause }, 'x402 middleware: facilitator unavailable');
  ctx.count('settle_failed');
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
export async function releaseSettled(
  ctx: StepContext,
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
  if (paid.idClaim) await keepSettledAnswer(paid.idClaim, config, held, headers, ctx.deps.logger);
  if (captured.kind === 'uncapturable') {
    ctx.count('settled_without_receipt');
    ctx.deps.logger.warn(
      { why: captured.why },
      'x402 middleware: response bypassed the middleware; settled without a receipt header',
    );
    reportLedger(ctx, paid, tx, undefined, charged);
    return;
  }
  ctx.count('settled');
  if (captured.kind === 'oversize') {
    const stream = releaseOversize(captured, (hash) => reportLedger(ctx, paid, tx, hash, charged));
    return held.release(headers, stream, 'private');
  }
  const bytes = captured.kind === 'bytes' ? captured.bytes : Buffer.alloc(0);
  held.release(headers, captured.kind === 'bytes' ? captured.replacement : undefined, 'private');
  const contentHash = config.disableBodyCapture ? undefined : bodySha256(bytes);
  reportLedger(ctx, paid, tx, contentHash, charged);
}
