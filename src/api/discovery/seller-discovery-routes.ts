/**
 * `GET /v1/sellers/{id}/discovery` (docs/api.md#a-sellers-view-of-discovery): how the seller's endpoints appear
 * in the public catalogue (./seller-listing.ts), for the owning account's session or the seller's own service
 * PAT — the bearers that read its endpoints.
 *
 * Defends: one account reading another's seller, a service PAT reading another seller (the sellers' own
 * `authorize`, 404 `seller_not_found`). Does not defend: what the catalogue itself shows (it is public).
 */
import Router from '@koa/router';
import type { Knex } from 'knex';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import { requireSessionPower } from '../auth/session-powers.js';
import { validate } from '../http/validate.js';
import { platformRouter } from '../platform/platform-principal.js';
import type { SellerRow } from '../sellers/seller-views.js';
import { sellerIdSchema } from '../sellers/seller-schemas.js';
import type { ChainInfo } from '../../shared/chain-registry.js';
import type { SellerDiscovery } from '../../shared/api-responses/seller-discovery-responses.js';
import { revenueWindowStart } from './discovery-service.js';
import { sellerDiscoveryEndpointOf } from './seller-listing.js';
import { SellerListingStore } from './seller-listing-store.js';

export interface SellerDiscoveryRouteDeps {
  auth: Authenticator;
  profiles: { authorize(principal: Principal, sellerId: string): Promise<SellerRow> };
  knex: Knex;
  chain: ChainInfo;
  clock: () => Date;
}

export function sellerDiscoveryRoutes(deps: SellerDiscoveryRouteDeps): Router {
  const { router, principalOf } = platformRouter(deps.auth);
  const store = new SellerListingStore(deps.knex);

  router.get('/v1/sellers/:id/discovery', async (ctx) => {
    const principal = await principalOf(ctx);
    requireSessionPower(principal, 'account');
    const seller = await deps.profiles.authorize(principal, validate(sellerIdSchema, ctx.params.id, 'path'));
    const rows = await store.endpointsOf(seller.id, deps.chain.network, revenueWindowStart(deps.clock()));
    const body: SellerDiscovery = {
      seller_id: seller.id,
      network: deps.chain.network,
      endpoints: rows.map(sellerDiscoveryEndpointOf),
    };
    ctx.body = body;
  });

  return router;
}
