/**
 * Seller routes (platform): /v1/sellers (registering and listing need the owner's sign-in session), a seller's
 * surface: reads (`sellerOf(ctx, 'account')`) take the owner's sign-in session or the seller's service PAT;
 * management (profile, origin, OpenAPI URL, payout mode, banking, endpoints and prices, suspend/resume, origin
 * verification, OpenAPI refresh) too (`sellerOf(ctx, 'owner')`) — a session exchanged from an agent PAT is
 * refused both, as its PAT is (session-powers.ts); service PATs, pay-to proofs and
 * payout flushes take the owner's sign-in session only; POST /v1/auth/verify (service PAT, for the middleware);
 * the lists (sellers, endpoints, payout flushes, service PATs) paged with `limit` and `cursor`;
 * the ledger: POST /v1/ledger (middleware reports), GET /v1/ledger, /v1/ledger/revenue, /v1/ledger/export;
 * pay-to addresses (GET/POST /v1/sellers/:id/pay-to) the ledger rows are verified against on chain.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { queryOf } from '../http/request-query.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import { requireSession, requireSessionPower, type SessionPower } from '../auth/session-powers.js';
import { AppError } from '../errors/app-error.js';
import type { PatService } from '../platform/pat-service.js';
import type { LedgerPendingCap } from './ledger/ledger-pending-cap.js';
import type { SellerLedgerService } from './ledger/seller-ledger-service.js';
import type { SellerPayToService } from './seller-pay-to-service.js';
import type { SellerServices } from './seller-service.js';
import { patIdSchema } from '../platform/pat-schemas.js';
import { issuePatBodySchema } from '../platform/treasury-schemas.js';
import { sellerView, type SellerRow } from './seller-views.js';
import { reportLedgerBatch } from './ledger/ledger-batch.js';
import { ledgerBatchBodySchema, ledgerReportBodySchema } from '../../shared/ledger-report-schema.js';
import {
  createEndpointBodySchema,
  createSellerBodySchema,
  endpointIdSchema,
  ledgerQuerySchema,
  sellerIdSchema,
  updateEndpointBodySchema,
  updateSellerBodySchema,
  bankingBodySchema,
  payToBodySchema,
  authVerifyBodySchema,
} from './seller-schemas.js';
import { pageQuerySchema } from '../http/schemas/page-query-schema.js';
import { platformRouter } from '../platform/platform-principal.js';
import { bodyOrEmpty, validate } from '../http/validate.js';
import type { LedgerBatchResult, LedgerReported } from '../../shared/api-responses/seller-ledger-responses.js';
import type { SellerAuthVerify } from '../../shared/api-responses/seller-responses.js';
import type { SellerPayouts } from './payouts/seller-payouts.js';
import type { PlatformWallets } from './payouts/platform-wallets.js';
import { idempotencyKeySchema } from '../http/schemas/common-schemas.js';
import { paymentIdRoutes, type PaymentIdRouteDeps } from './payment-ids/payment-id-routes.js';

/** What every seller route is built with. */
export type SellerRouteDeps = {
  auth: Authenticator;
  sellers: SellerServices;
  ledger: SellerLedgerService;
  /** Refuses a report past its seller's pending-row cap before anything is stored. */
  pendingCap: Pick<LedgerPendingCap, 'admit'>;
  payTo: SellerPayToService;
  pats: Pick<PatService, 'create' | 'list' | 'revoke'>;
  payouts: SellerPayouts;
  collections: Pick<PlatformWallets, 'payToFor'>;
} & Omit<PaymentIdRouteDeps, 'auth' | 'sellers'>;

/** The router, the bearer's check and the three ways a route finds its seller. */
interface SellerRouteKit {
  router: Router;
  deps: SellerRouteDeps;
  principalOf: (ctx: Context) => Promise<Principal>;
  sellerOf: (ctx: Context, power: SessionPower) => Promise<SellerRow>;
  reportingSeller: (ctx: Context) => Promise<SellerRow>;
  ledgerSeller: (ctx: Context, sellerId: string | undefined) => Promise<SellerRow>;
}

function sellerRouteKit(deps: SellerRouteDeps): SellerRouteKit {
  const { router, principalOf } = platformRouter(deps.auth);
  /** The seller the path names, if the bearer reaches it; a session must hold `power` (session-powers.ts). */
  const sellerOf = async (ctx: Context, power: SessionPower) => {
    const p = await principalOf(ctx);
    requireSessionPower(p, power);
    return deps.sellers.profiles.authorize(p, validate(sellerIdSchema, ctx.params.id, 'path'));
  };
  /** Ledger reports: the seller of the service PAT that sends them. */
  const reportingSeller = async (ctx: Context) => {
    const p = await principalOf(ctx);
    if (!(p.kind === 'token' && p.tokenKind === 'pat' && p.scopeType === 'service'))
      throw new AppError('insufficient_scope', { message: 'Ledger reports take a service PAT.' });
    return deps.sellers.profiles.authorize(p, p.scopeId);
  };
  /** Ledger routes: a service PAT reads its own seller; a session names `seller_id`. */
  const ledgerSeller = async (ctx: Context, sellerId: string | undefined) => {
    const p = await principalOf(ctx);
    if (p.kind === 'token' && p.tokenKind === 'pat' && p.scopeType === 'service')
      return deps.sellers.profiles.authorize(p, sellerId ?? p.scopeId);
    requireSessionPower(p, 'account');
    if (!sellerId) throw new AppError('invalid_request', { message: 'seller_id is required with an account session.' });
    return deps.sellers.profiles.authorize(p, sellerId);
  };
  return { router, deps, principalOf, sellerOf, reportingSeller, ledgerSeller };
}

/** The seller routes, in this order: profile, payouts and pay-to, service PATs and status, endpoints, ledger. */
export function sellerRoutes(deps: SellerRouteDeps): Router {
  const kit = sellerRouteKit(deps);
  profileRoutes(kit);
  payoutRoutes(kit);
  accessRoutes(kit);
  endpointRoutes(kit);
  ledgerRoutes(kit);
  kit.router.use(paymentIdRoutes(deps).routes()); // the payment-identifier store (./payment-ids/)
  return kit.router;
}

/** Registering, reading and changing a seller: profile, banking, origin verification, OpenAPI refresh. */
function profileRoutes(kit: SellerRouteKit): void {
  const { router, deps, principalOf, sellerOf } = kit;
  router.post('/v1/sellers', async (ctx) => {
    const p = await principalOf(ctx);
    const { accountId } = requireSession(p, 'owner');
    const body = validate(createSellerBodySchema, ctx.state.body);
    ctx.status = 201;
    ctx.body = await deps.sellers.profiles.create(accountId, body, p.actor);
  });
  router.get('/v1/sellers', async (ctx) => {
    const { accountId } = requireSession(await principalOf(ctx), 'account');
    ctx.body = await deps.sellers.profiles.list(accountId, validate(pageQuerySchema, queryOf(ctx), 'query'));
  });
  router.get('/v1/sellers/:id', async (ctx) => {
    ctx.body = sellerView(await sellerOf(ctx, 'account'));
  });
  router.patch('/v1/sellers/:id', async (ctx) => {
    const seller = await sellerOf(ctx, 'owner');
    ctx.body = await deps.sellers.profiles.update(seller, validate(updateSellerBodySchema, ctx.state.body));
  });
  router.get('/v1/sellers/:id/banking', async (ctx) => {
    ctx.body = deps.sellers.profiles.banking(await sellerOf(ctx, 'account'));
  });
  router.put('/v1/sellers/:id/banking', async (ctx) => {
    const seller = await sellerOf(ctx, 'owner');
    ctx.body = await deps.sellers.profiles.setBanking(seller, validate(bankingBodySchema, ctx.state.body));
  });
  router.post('/v1/sellers/:id/banking/verify', async (ctx) => {
    const p = await principalOf(ctx);
    if (p.kind !== 'admin')
      throw new AppError('insufficient_scope', { message: 'Only the operator marks banking details verified.' });
    ctx.body = await deps.sellers.profiles.verifyBanking(validate(sellerIdSchema, ctx.params.id, 'path'));
  });
  router.get('/v1/sellers/:id/verify', async (ctx) => {
    const seller = await sellerOf(ctx, 'account');
    ctx.body = await deps.sellers.origins.instructions(seller);
  });
  router.post('/v1/sellers/:id/verify', async (ctx) => {
    ctx.body = await deps.sellers.origins.verify(await sellerOf(ctx, 'owner'));
  });
  router.post('/v1/sellers/:id/refresh', async (ctx) => {
    ctx.body = await deps.sellers.openapi.refresh(await sellerOf(ctx, 'owner'));
  });
}

/** Payouts (a flush is a transfer out of the collection wallet) and the proven pay-to addresses. */
function payoutRoutes(kit: SellerRouteKit): void {
  const { router, deps, principalOf, sellerOf } = kit;
  router.get('/v1/sellers/:id/payouts', async (ctx) => {
    const seller = await sellerOf(ctx, 'account');
    ctx.body = await deps.ledger.payouts(seller, validate(pageQuerySchema, queryOf(ctx), 'query'));
  });
  router.post('/v1/sellers/:id/payouts/flush', async (ctx) => {
    const p = await principalOf(ctx);
    requireSession(p, 'owner');
    const seller = await deps.sellers.profiles.authorize(p, validate(sellerIdSchema, ctx.params.id, 'path'));
    const header = ctx.get('idempotency-key');
    const key = header === '' ? undefined : idempotencyKeySchema.safeParse(header);
    if (key && !key.success) throw new AppError('invalid_idempotency_key');
    // A transfer out of the seller's collection wallet per network (./payouts/seller-payouts.ts).
    await deps.payouts.flush(seller, p.actor, key?.data);
    // The answer is the payouts' first page, as GET answers it without a query.
    ctx.body = await deps.ledger.payouts(seller, pageQuerySchema.parse({}));
  });
  // Pay-to addresses: ledger rows count once a transfer to one of them is verified on chain. Proving one
  // redirects revenue: the owner's session only.
  router.get('/v1/sellers/:id/pay-to', async (ctx) => {
    ctx.body = await deps.payTo.payTo(await sellerOf(ctx, 'account'));
  });
  router.post('/v1/sellers/:id/pay-to', async (ctx) => {
    const p = await principalOf(ctx);
    requireSession(p, 'owner');
    const seller = await deps.sellers.profiles.authorize(p, validate(sellerIdSchema, ctx.params.id, 'path'));
    ctx.body = await deps.payTo.registerPayTo(seller, validate(payToBodySchema, ctx.state.body));
  });
}

/** The seller's service PATs (the owner's sign-in session manages them), suspension and resumption. */
function accessRoutes(kit: SellerRouteKit): void {
  const { router, deps, principalOf, sellerOf } = kit;
  // Service PATs of one seller (the owner's sign-in session manages them).
  router.post('/v1/sellers/:id/pats', async (ctx) => {
    const p = await principalOf(ctx);
    const { accountId } = requireSession(p, 'owner');
    const seller = await deps.sellers.profiles.authorize(p, validate(sellerIdSchema, ctx.params.id, 'path'));
    const body = validate(issuePatBodySchema, bodyOrEmpty(ctx.state.body));
    ctx.status = 201;
    ctx.body = await deps.pats.create(accountId, { scope_type: 'service', scope_id: seller.id, ...body }, p.actor);
  });
  router.get('/v1/sellers/:id/pats', async (ctx) => {
    const p = await principalOf(ctx);
    const { accountId } = requireSession(p, 'owner');
    const seller = await deps.sellers.profiles.authorize(p, validate(sellerIdSchema, ctx.params.id, 'path'));
    ctx.body = await deps.pats.list(accountId, validate(pageQuerySchema, queryOf(ctx), 'query'), {
      scope_type: 'service',
      scope_id: seller.id,
    });
  });
  router.delete('/v1/sellers/:id/pats/:pat_id', async (ctx) => {
    const p = await principalOf(ctx);
    const { accountId } = requireSession(p, 'owner');
    const seller = await deps.sellers.profiles.authorize(p, validate(sellerIdSchema, ctx.params.id, 'path'));
    const patId = validate(patIdSchema, ctx.params.pat_id, 'path');
    ctx.body = await deps.pats.revoke(accountId, patId, { scope_type: 'service', scope_id: seller.id });
    deps.auth.forget(patId);
  });
  router.post('/v1/sellers/:id/suspend', async (ctx) => {
    ctx.body = await deps.sellers.profiles.setStatus(await sellerOf(ctx, 'owner'), 'suspended');
  });
  router.post('/v1/sellers/:id/resume', async (ctx) => {
    ctx.body = await deps.sellers.profiles.setStatus(await sellerOf(ctx, 'owner'), 'active');
  });
}

/** The seller's priced endpoints. */
function endpointRoutes(kit: SellerRouteKit): void {
  const { router, deps, sellerOf } = kit;
  router.post('/v1/sellers/:id/endpoints', async (ctx) => {
    const seller = await sellerOf(ctx, 'owner');
    const body = validate(createEndpointBodySchema, ctx.state.body);
    ctx.status = 201;
    ctx.body = await deps.sellers.endpoints.create(seller, body);
  });
  router.get('/v1/sellers/:id/endpoints', async (ctx) => {
    const seller = await sellerOf(ctx, 'account');
    ctx.body = await deps.sellers.endpoints.list(seller, validate(pageQuerySchema, queryOf(ctx), 'query'));
  });
  router.patch('/v1/sellers/:id/endpoints/:endpoint_id', async (ctx) => {
    const seller = await sellerOf(ctx, 'owner');
    const endpointId = validate(endpointIdSchema, ctx.params.endpoint_id, 'path');
    ctx.body = await deps.sellers.endpoints.update(
      seller,
      endpointId,
      validate(updateEndpointBodySchema, ctx.state.body),
    );
  });
  router.delete('/v1/sellers/:id/endpoints/:endpoint_id', async (ctx) => {
    const seller = await sellerOf(ctx, 'owner');
    await deps.sellers.endpoints.delete(seller, validate(endpointIdSchema, ctx.params.endpoint_id, 'path'));
    ctx.status = 204;
  });
}

/** The middleware's route table and collection address, ledger reports, and reading the ledger. */
function ledgerRoutes(kit: SellerRouteKit): void {
  const { router, deps, principalOf, reportingSeller, ledgerSeller } = kit;
  router.post('/v1/auth/verify', async (ctx) => {
    const seller = await deps.sellers.profiles.authorizeMiddleware(await principalOf(ctx));
    const { network } = validate(authVerifyBodySchema, bodyOrEmpty(ctx.state.body));
    const table = await deps.sellers.endpoints.routeTable(seller);
    // Where this seller's buyers pay on the paywall's network: its collection wallet when the platform is its
    // merchant of record, created on first use (null: the seller's own pay-to).
    ctx.body = {
      ...table,
      collect_to: await deps.collections.payToFor(seller, network),
    } satisfies SellerAuthVerify;
  });

  router.post('/v1/ledger', async (ctx) => {
    const seller = await reportingSeller(ctx);
    const body = validate(ledgerReportBodySchema, ctx.state.body);
    await deps.pendingCap.admit([{ seller, row: body }]);
    const result = await deps.ledger.report(seller, body);
    ctx.status = result.created ? 201 : 200;
    ctx.body = { ...result.entry, duplicate: !result.created } satisfies LedgerReported;
  });
  // A batch of rows, each stored as POST /v1/ledger would (idempotent per seller and tx_hash); one bad row does not
  // fail the others: every row gets its own outcome, in order.
  router.post('/v1/ledger/batch', async (ctx) => {
    const seller = await reportingSeller(ctx);
    const body = validate(ledgerBatchBodySchema, ctx.state.body);
    // `status`/`reason`: the stored row's verification state (pending until verified on chain).
    const results = await reportLedgerBatch(deps.ledger, deps.pendingCap, body.rows, async () => seller);
    ctx.body = { results } satisfies LedgerBatchResult;
  });
  router.get('/v1/ledger', async (ctx) => {
    const q = validate(ledgerQuerySchema, queryOf(ctx), 'query');
    ctx.body = await deps.ledger.ledger(await ledgerSeller(ctx, q.seller_id), q);
  });
  router.get('/v1/ledger/revenue', async (ctx) => {
    const q = validate(ledgerQuerySchema, queryOf(ctx), 'query');
    ctx.body = await deps.ledger.revenue(await ledgerSeller(ctx, q.seller_id), q);
  });
  router.get('/v1/ledger/export', async (ctx) => {
    const q = validate(ledgerQuerySchema, queryOf(ctx), 'query');
    const seller = await ledgerSeller(ctx, q.seller_id); // the bearer first: a refused one learns nothing of the query
    if (q.format !== 'csv')
      throw new AppError('invalid_request', { message: 'format=csv is the supported export format.' });
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="ledger-${seller.slug}.csv"`);
    ctx.body = deps.ledger.exportCsv(seller, q);
  });
}
