/**
 * The routes of the x402 `payment-identifier` store (docs/api.md#payment-identifier-store), all POST with a JSON
 * body (src/shared/payment-identifier-wire.ts), all answering 200:
 *   /v1/payment-ids/{begin,complete,release}       a seller's middleware, with that seller's service PAT: the
 *                                                  ids are its seller's (a suspended seller is refused);
 *   /v1/gate/payment-ids/{begin,complete,release}  the gate, with a gate PAT: the ids are the seller's of the
 *                                                  body's `endpoint_id`, which must be a managed (`mpp`) seller
 *                                                  of the gate's account (else `endpoint_not_found`).
 *
 * Defends: a tenant reading or writing another seller's ids; any other bearer reaching these routes (403).
 * Does not defend: what a seller's own paywall stores (./payment-id-service.ts).
 */
import type { Context } from 'koa';
import { requireGateScope, type Authenticator } from '../../auth/authenticator.js';
import { AppError } from '../../errors/app-error.js';
import { validate } from '../../http/validate.js';
import { platformRouter } from '../../platform/platform-principal.js';
import {
  paymentIdBeginBodySchema,
  paymentIdCompleteBodySchema,
  paymentIdReleaseBodySchema,
} from '../../../shared/payment-identifier-wire.js';
import type { SellerServices } from '../seller-service.js';
import type { GateCatalogueStore } from '../store/seller-stores.js';
import type { PaymentIdService } from './payment-id-service.js';

export interface PaymentIdRouteDeps {
  auth: Authenticator;
  sellers: Pick<SellerServices, 'profiles'>;
  gateStore: Pick<GateCatalogueStore, 'managedSellerOfEndpoint'>;
  paymentIds: PaymentIdService;
}

export function paymentIdRoutes(deps: PaymentIdRouteDeps) {
  const { router, principalOf } = platformRouter(deps.auth);
  /** The bearer is checked first; the seller follows: the service PAT's, or the gate's endpoint's. */
  type SellerOf = (endpointId: string | undefined) => Promise<string>;
  const serviceBearer = async (ctx: Context): Promise<SellerOf> => {
    const seller = await deps.sellers.profiles.authorizeMiddleware(await principalOf(ctx));
    return () => Promise.resolve(seller.id);
  };
  const gateBearer = async (ctx: Context): Promise<SellerOf> => {
    const accountId = requireGateScope(await principalOf(ctx));
    return async (endpointId) => {
      if (!endpointId) throw new AppError('invalid_request', { message: 'The gate names the endpoint_id.' });
      const seller = await deps.gateStore.managedSellerOfEndpoint(accountId, endpointId);
      if (!seller) throw new AppError('endpoint_not_found');
      return seller.id;
    };
  };

  for (const [prefix, bearer] of [
    ['/v1/payment-ids', serviceBearer],
    ['/v1/gate/payment-ids', gateBearer],
  ] as const) {
    router.post(`${prefix}/begin`, async (ctx) => {
      const sellerOf = await bearer(ctx);
      const body = validate(paymentIdBeginBodySchema, ctx.state.body);
      ctx.body = await deps.paymentIds.begin(await sellerOf(body.endpoint_id), body);
      ctx.set('Cache-Control', 'no-store');
    });
    router.post(`${prefix}/complete`, async (ctx) => {
      const sellerOf = await bearer(ctx);
      const body = validate(paymentIdCompleteBodySchema, ctx.state.body);
      ctx.body = await deps.paymentIds.complete(await sellerOf(body.endpoint_id), body);
    });
    router.post(`${prefix}/release`, async (ctx) => {
      const sellerOf = await bearer(ctx);
      const body = validate(paymentIdReleaseBodySchema, ctx.state.body);
      ctx.body = await deps.paymentIds.release(await sellerOf(body.endpoint_id), body);
    });
  }
  return router;
}
