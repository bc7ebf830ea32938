/**
 * The catalogue entries of the public discovery routes (./discovery-routes.ts) and of a seller's view of them
 * (./seller-discovery-routes.ts); src/api/api-catalog.ts puts every
 * family together.
 *
 * Defends: a client generated from the document meeting these routes, replies or errors undescribed. Does not
 * defend: what the catalogue lists (./discovery-store.ts).
 */
import { sellerDiscoverySchema } from '../../shared/api-responses/seller-discovery-responses.js';
import type { CatalogEntry } from '../http/openapi/catalog-entry.js';
import {
  discoveryResourcesPageSchema,
  discoverySearchPageSchema,
} from '../../shared/api-responses/discovery-responses.js';
import { discoveryResourcesQuerySchema, discoverySearchQuerySchema } from './discovery-schemas.js';

/** What every catalogue read can answer besides its reply: its own 400s, the address's rate limit, PostgreSQL away. */
const DISCOVERY_ERRORS = [
  'discovery_query_invalid',
  'discovery_page_out_of_range',
  'rate_limited',
  'database_unavailable',
  'database_busy',
] as const;

export const DISCOVERY_CATALOG: CatalogEntry[] = [
  {
    method: 'GET',
    path: '/discovery/resources',
    operationId: 'listDiscoveryResources',
    summary:
      "Bazaar discovery: the active sellers' priced endpoints on verified origins, with their x402 terms and 30-day verified revenue (public)",
    auth: 'none',
    query: discoveryResourcesQuerySchema,
    replies: { 200: discoveryResourcesPageSchema },
    errors: [...DISCOVERY_ERRORS],
  },
  {
    method: 'GET',
    path: '/discovery/search',
    operationId: 'searchDiscoveryResources',
    summary: 'Bazaar discovery: the listed resources matching a plain-text query, best matches first (public)',
    auth: 'none',
    query: discoverySearchQuerySchema,
    replies: { 200: discoverySearchPageSchema },
    errors: [...DISCOVERY_ERRORS],
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/discovery',
    operationId: 'readSellerDiscovery',
    summary: "How the seller's endpoints appear in the public catalogue: listed or why not, price, revenue, uptime",
    auth: 'owner_session_or_service',
    replies: { 200: sellerDiscoverySchema },
    errors: ['seller_not_found'],
  },
];
