/**
 * The first step of an x402 payment (./pay-service.ts, before anything is read for the decision, reserved or
 * signed): when the pay body names the origin that answered the seller's 402 (`challenge_origin`, the buyer SDK
 * sends it) and the payee is a Treasury seller's, the payment is signed only for an origin where that seller sells
 * (./challenge-origin-binding.ts; the payee's binding read through ./payee-bindings.ts). Otherwise it is refused —
 * recorded as the pay path records a refusal (a `pd_…` decision and a `policy.denied` audit row:
 * ./store/challenge-origin-refusal-write.ts) and answered 403 `challenge_origin_not_seller` with `decision_id`,
 * `challenge_origin`, `pay_to` and `network`. Nothing is reserved, signed or spent.
 *
 * The origin is read from the request the call carries (`CallContext.request`: the route and the body the route
 * validated with payBodySchema and whose hash keys idempotency), so the same body always gets the same answer.
 *
 * Defends: the buyer paying a Treasury seller's payee for a page that copied the seller's 402 and named itself as
 * the resource (that page would replay the signed payment at the seller); a malformed origin slipping past (refused
 * 400 here too). Does not defend: a request without `challenge_origin` (older SDKs, other clients: nothing is
 * bound), a payee that is no Treasury seller's, and what ./challenge-origin-binding.ts lists.
 */
import type { Knex } from 'knex';
import { formatUsd } from '../../../policy/money.js';
import { AppError } from '../errors/app-error.js';
import { challengeOriginAllowed } from './challenge-origin-binding.js';
import { PayeeBindings } from './payee-bindings.js';
import type { PayDeps } from './pay-deps.js';
import { challengeOriginSchema, type PaymentRequirements } from './pay-schemas.js';
import type { CallContext } from './pay-types.js';
import { writeChallengeOriginRefusal } from './store/challenge-origin-refusal-write.js';
import { PgPayeeOwners } from './store/pg-payee-owners.js';

/** What the check takes from the pay path (./pay-deps.ts). */
type PayParts = Pick<PayDeps, 'mint' | 'clock' | 'memory' | 'metrics'>;

/** The pay body's `challenge_origin` in the call's request; undefined when it names none. */
export function challengeOriginOf(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  const body = (request as { body?: unknown }).body;
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as { challenge_origin?: unknown }).challenge_origin;
  if (value === undefined) return undefined;
  const parsed = challengeOriginSchema.safeParse(value);
  if (!parsed.success)
    throw new AppError('invalid_request', {
      message: `The request body is invalid: challenge_origin: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      fields: { issues: [{ path: 'challenge_origin', message: parsed.error.issues[0]?.message ?? 'invalid' }] },
    });
  return parsed.data;
}

/** The check, with its payees' bindings read from `knex` (./payee-bindings.ts). */
export class ChallengeOriginCheck {
  private readonly bindings: PayeeBindings;

  constructor(
    private readonly knex: Knex,
    private readonly pay: PayParts,
  ) {
    this.bindings = new PayeeBindings(new PgPayeeOwners(knex));
  }

  /** Refuses (403 `challenge_origin_not_seller`, recorded) a payment its challenge's origin may not ask for. */
  async refuseForeign(
    ctx: CallContext,
    requirements: Pick<PaymentRequirements, 'network' | 'payTo' | 'amount'>,
    capability: string | undefined,
  ): Promise<void> {
    const challengeOrigin = challengeOriginOf(ctx.request);
    if (challengeOrigin === undefined) return;
    const binding = await this.bindings.of(requirements.network, requirements.payTo);
    if (challengeOriginAllowed(binding, challengeOrigin)) return;

    const { mint, clock, memory, metrics } = this.pay;
    const decisionId = mint.id('pd_');
    const amountMicro = BigInt(requirements.amount);
    const recorded = await writeChallengeOriginRefusal(this.knex, {
      id: decisionId,
      accountId: ctx.accountId,
      walletId: ctx.walletId,
      amountMicro,
      amountUsd: formatUsd(amountMicro),
      to: requirements.payTo,
      network: requirements.network,
      capability: capability ?? null,
      challengeOrigin,
      message: `The payee ${requirements.payTo} is a Treasury seller's, and ${challengeOrigin} is not where it sells.`,
      actor: ctx.actor,
      at: clock(),
    }).then(
      () => true,
      // Another account's wallet or a revoked one is answered as the pay path answers it; any other failure to
      // record does not let the payment through.
      (err: unknown) => (err instanceof AppError ? Promise.reject(err) : false),
    );
    memory.forgetSnapshot(ctx.walletId);
    metrics.payDecisions.inc({ kind: 'pay', outcome: 'deny' });
    throw new AppError('challenge_origin_not_seller', {
      fields: {
        decision_id: recorded ? decisionId : null,
        challenge_origin: challengeOrigin,
        pay_to: requirements.payTo,
        network: requirements.network,
      },
    });
  }
}
