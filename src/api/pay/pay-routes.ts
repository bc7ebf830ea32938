/**
 * Policy and pay routes of a wallet (Treasury-scoped bearer): PUT/GET /v1/wallets/{id}/policy, PUT
 * /v1/wallets/{id}/policy/signed (an owner-signed policy: ../wallets/owner-policy-service.ts),
 * POST /v1/wallets/{id}/policy/evaluate (dry run), POST /v1/wallets/{id}/pay and /transfer
 * (with an optional Idempotency-Key header; a pay body's `payment_identifier` is its key,
 * ./payment-identifier-key.ts), POST /v1/wallets/{id}/authorizations/{authorization_id}/settlement
 * (an `exact` or `upto` settlement, verified on chain). A revoked wallet answers 410 on each of them
 * (test/integration/api/revoked-wallet-routes.test.ts walks the route table). The two policy writes are
 * counted in the `policy` rate-limit bucket per account (../auth/wallet-tenant.ts) on top of the `pay`
 * bucket their bearer spends: each writes an audit row nobody may delete.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { parseUsd } from '../../../policy/money.js';
import { agentBinding } from '../auth/authenticator.js';
import { AppError } from '../errors/app-error.js';
import type { CallContext, PayService } from './pay-service.js';
import type { SettlementService } from './settlement-service.js';
import type { ChainRegistry } from '../../shared/chain-registry.js';
import { withCreateWalletRecovery } from './create-wallet-recovery.js';
import { authorizationIdSchema, walletIdSchema } from '../http/schemas/common-schemas.js';
import {
  evaluateBodySchema,
  idempotencyKeySchema,
  payBodySchema,
  putPolicyBodySchema,
  putSignedPolicyBodySchema,
  settlementBodySchema,
  transferBodySchema,
} from './pay-schemas.js';
import { validate } from '../http/validate.js';
import { asPaymentIdentifierConflict, payIdempotencyKey } from './payment-identifier-key.js';
import { MemoizedValidation } from '../http/memoized-validation.js';
import { answerJson } from '../http/json-answer.js';
import { walletBearer, type WalletRouteDeps } from '../wallets/wallet-bearer.js';
import type { PolicyEvaluation } from '../../shared/api-responses/pay-responses.js';
import type { OwnerPolicyService } from '../wallets/owner-policy-service.js';
import type { RateLimits } from '../http/middleware/rate-limit.js';
import { walletTenant } from '../auth/wallet-tenant.js';
import type { PayAdmission } from './pay-admission.js';

/** A money-moving call's context: the caller's scope, its Idempotency-Key (checked) and the request it came with. */
function callContext(
  ctx: Context,
  s: Omit<CallContext, 'idempotencyKey' | 'request'>,
  body: unknown,
  paymentIdentifier?: string,
): CallContext {
  const header = ctx.get('idempotency-key');
  let idempotencyKey: string | undefined;
  if (header !== '') {
    const parsed = idempotencyKeySchema.safeParse(header);
    if (!parsed.success) throw new AppError('invalid_idempotency_key');
    idempotencyKey = parsed.data;
  }
  idempotencyKey = payIdempotencyKey(idempotencyKey, paymentIdentifier);
  return {
    ...s,
    idempotencyKey,
    request: { route: ctx.path, body },
    bodyText: ctx.state.bodyText as string | undefined,
  };
}

/**
 * The bearer and the scope of a wallet route: Treasury bearers everywhere; agent PATs, and sessions exchanged
 * from them, on the wallet operations (read policy, evaluate, pay, transfer). An exchanged session spends as its
 * PAT: that PAT's daily cap and daily total, and the PAT as the authorization's actor (which give-backs count
 * against).
 */
async function bearerScope(deps: Pick<WalletRouteDeps, 'auth' | 'knex'>, ctx: Context, agentAllowed: boolean) {
  const { principal, accountId } = await walletBearer(deps, ctx.get('authorization'), agentAllowed);
  const walletId = validate(walletIdSchema, ctx.params.id, 'path');
  const binding = agentAllowed ? agentBinding(principal) : undefined;
  const pat = binding ? { tokenId: binding.patId, dailyCapMicro: binding.dailyCapMicro } : undefined;
  return { principal, s: { accountId, walletId, actor: binding ? binding.patId : principal.actor, pat } };
}

/**
 * A pay route's scope and its tenant: whose share of this process's places a payment waits for (./pay-admission.ts),
 * and whose `pay_account` budget the other pay routes spend.
 */
async function paymentScope(deps: Pick<WalletRouteDeps, 'auth' | 'knex'>, ctx: Context) {
  const { principal, s } = await bearerScope(deps, ctx, true);
  return { s, tenant: walletTenant(principal, s.accountId) };
}

/**
 * The scope of a pay route outside the admission (policy read, evaluate, settlement report), once its tenant has a
 * call left in `pay_account`: the tenant's share of these routes does not grow with its PATs and agents.
 */
async function meteredScope(
  deps: Pick<WalletRouteDeps, 'auth' | 'knex'> & { rateLimits: Pick<RateLimits, 'consume'> },
  ctx: Context,
) {
  const { s, tenant } = await paymentScope(deps, ctx);
  await deps.rateLimits.consume('pay_account', tenant);
  return s;
}

export function payRoutes(
  deps: WalletRouteDeps & {
    pay: PayService;
    settlements: SettlementService;
    ownerPolicies: OwnerPolicyService;
    /** Gives each tenant's payments their places (./pay-admission.ts). */
    admission: Pick<PayAdmission, 'run'>;
    /** Counts the policy writes (bucket `policy`, per account) and the calls outside the admission (`pay_account`). */
    rateLimits: Pick<RateLimits, 'consume'>;
    /** For the `create_wallet` recovery of a payment on a chain the agent holds no wallet on. */
    chains: ChainRegistry;
    dashboardUrl: string;
  },
): Router {
  const router = new Router();
  // Agents pay the same resources again and again: a pay body seen before is not parsed again.
  const payBodies = new MemoizedValidation(payBodySchema, { maxEntries: 1024, maxTextChars: 8192 });

  const scope = (ctx: Context) => meteredScope(deps, ctx);
  /** A policy write's scope (Treasury bearers only), once the bearer's account has a policy write left. */
  const policyWriteScope = async (ctx: Context) => {
    const { principal, s } = await bearerScope(deps, ctx, false);
    await deps.rateLimits.consume('policy', walletTenant(principal, s.accountId));
    return s;
  };

  router.get('/v1/wallets/:id/policy', async (ctx) => {
    const s = await scope(ctx);
    ctx.body = await deps.ownerPolicies.read(s.accountId, s.walletId);
  });

  /** Unsigned: 409 `policy_signature_required` on a wallet whose signer holds an owner-signed policy. */
  router.put('/v1/wallets/:id/policy', async (ctx) => {
    const s = await policyWriteScope(ctx);
    const policy = validate(putPolicyBodySchema, ctx.state.body);
    await deps.wallets.setPolicy(s.accountId, s.walletId, policy, s.actor);
    ctx.body = await deps.ownerPolicies.read(s.accountId, s.walletId);
  });

  router.put('/v1/wallets/:id/policy/signed', async (ctx) => {
    const s = await policyWriteScope(ctx);
    // 404 / 410 for the wallet before its body is read: a revoked wallet takes no policy.
    await deps.wallets.getActive(s.accountId, s.walletId);
    const body = validate(putSignedPolicyBodySchema, ctx.state.body);
    ctx.body = await deps.ownerPolicies.setSigned(s.accountId, s.walletId, body, s.actor);
  });

  router.post('/v1/wallets/:id/policy/evaluate', async (ctx) => {
    const s = await scope(ctx);
    const body = validate(evaluateBodySchema, ctx.state.body);
    const decision = await deps.pay.evaluate(s.accountId, s.walletId, {
      kind: body.kind,
      to: body.to,
      amountMicro: parseUsd(body.amount_usd),
      capability: body.capability,
    });
    ctx.body = { wallet_id: s.walletId, ...decision, dry_run: true } satisfies PolicyEvaluation;
  });

  router.post('/v1/wallets/:id/pay', async (ctx) => {
    const { s, tenant } = await paymentScope(deps, ctx);
    const body = payBodies.validate(ctx.state.bodyText as string | undefined, ctx.state.body);
    try {
      const call = callContext(ctx, s, ctx.state.body, body.payment_identifier);
      // A payment signed in place answers with the JSON text its row was written with (../http/json-answer.ts).
      const payment = await deps.admission.run(tenant, ctx.res, () =>
        deps.pay.pay(call, body.payment_requirements, body.capability, body.authorization, body.gas_sponsoring),
      );
      answerJson(ctx, payment);
    } catch (err) {
      throw await withCreateWalletRecovery(
        asPaymentIdentifierConflict(err, body.payment_identifier),
        s.accountId,
        deps,
      );
    }
  });

  router.post('/v1/wallets/:id/transfer', async (ctx) => {
    const { s, tenant } = await paymentScope(deps, ctx);
    const body = validate(transferBodySchema, ctx.state.body);
    const call = callContext(ctx, s, ctx.state.body);
    answerJson(ctx, await deps.admission.run(tenant, ctx.res, () => deps.pay.transfer(call, body)));
  });

  router.post('/v1/wallets/:id/authorizations/:authorization_id/settlement', async (ctx) => {
    const s = await scope(ctx);
    // 404 / 410 for the wallet before the authorization is looked up: a revoked wallet settles nothing.
    await deps.wallets.getActive(s.accountId, s.walletId);
    const authorizationId = validate(authorizationIdSchema, ctx.params.authorization_id, 'path');
    const body = validate(settlementBodySchema, ctx.state.body);
    ctx.body = await deps.settlements.recordSettlement(s, authorizationId, body.transaction);
  });

  return router;
}
