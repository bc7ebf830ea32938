/**
 * The public catalogue, in the routes and shapes of x402's Bazaar discovery API: GET /discovery/resources
 * (filters type, payTo, scheme, network, extensions; limit and offset) and GET /discovery/search (query; the
 * same filters; limit and cursor). No bearer is read: the official client's `withBazaar(new
 * HTTPFacilitatorClient({ url: <this API> }))` lists and searches it as it would a facilitator's. Both are
 * rate limited per client address (bucket `discovery`, src/api/http/middleware/rate-limit.ts).
 *
 * Defends: a query string outside its bounds reaching the store (./discovery-schemas.ts, stable 400 codes).
 * Does not defend: what is listed (./discovery-store.ts decides, in one WHERE clause).
 */
import Router from '@koa/router';
import { queryOf } from '../http/request-query.js';
import type { DiscoveryResourcesPage, DiscoverySearchPage } from '../../shared/api-responses/discovery-responses.js';
import { discoveryResourcesQuerySchema, discoverySearchQuerySchema, parseDiscoveryQuery } from './discovery-schemas.js';
import type { DiscoveryService } from './discovery-service.js';

export function discoveryRoutes(deps: { discovery: DiscoveryService }): Router {
  const router = new Router();

  router.get('/discovery/resources', async (ctx) => {
    const q = parseDiscoveryQuery(discoveryResourcesQuerySchema, queryOf(ctx));
    ctx.body = (await deps.discovery.resources(q)) satisfies DiscoveryResourcesPage;
  });

  router.get('/discovery/search', async (ctx) => {
    const q = parseDiscoveryQuery(discoverySearchQuerySchema, queryOf(ctx));
    ctx.body = (await deps.discovery.matching(q)) satisfies DiscoverySearchPage;
  });

  return router;
}
