/**
 * The catalogue entry of the sandbox's faucet route (./faucet-routes.ts); src/api/api-catalog.ts puts every
 * family together.
 *
 * Defends: a client generated from the document meeting the route, its reply or its 404 undescribed.
 */
import type { CatalogEntry } from '../http/openapi/catalog-entry.js';
import { sandboxFaucetsSchema } from '../../shared/api-responses/sandbox-responses.js';

export const SANDBOX_CATALOG: CatalogEntry[] = [
  {
    method: 'GET',
    path: '/v1/sandbox/faucets',
    operationId: 'getSandboxFaucets',
    summary:
      "Where this sandbox's testnet faucets listen (loopback URLs); 404 on an API that is not a sandbox (public)",
    auth: 'none',
    replies: { 200: sandboxFaucetsSchema },
    errors: ['not_found'],
  },
];
