/**
 * The catalogue entries of the account's PAT routes (./pat-routes.ts); src/api/api-catalog.ts puts
 * every family together.
 *
 * Defends: a client generated from the document meeting these routes, replies or errors undescribed. Does
 * not defend: the PAT rules themselves (./pat-service.ts).
 */
import type { CatalogEntry } from '../http/openapi/catalog-entry.js';
import { pageQuerySchema } from '../http/schemas/page-query-schema.js';
import { createdPatSchema, patPageSchema, patViewSchema } from '../../shared/api-responses/pat-responses.js';
import { createPatBodySchema, patchPatBodySchema } from './pat-schemas.js';

export const PAT_CATALOG: CatalogEntry[] = [
  {
    method: 'POST',
    path: '/v1/pats',
    operationId: 'createPat',
    summary: 'Create a PAT (with parent_pat_id: within that PAT, bounded by it)',
    auth: 'owner_session',
    body: createPatBodySchema,
    replies: { 201: createdPatSchema },
    errors: ['scope_not_found', 'pat_not_found', 'lineage_exceeds_parent', 'pat_limit_reached'],
  },
  {
    method: 'GET',
    path: '/v1/pats',
    operationId: 'listPats',
    summary: 'List PATs (paged)',
    auth: 'owner_session',
    query: pageQuerySchema,
    replies: { 200: patPageSchema },
  },
  {
    method: 'DELETE',
    path: '/v1/pats/{id}',
    operationId: 'revokePat',
    summary: 'Revoke a PAT',
    auth: 'owner_session',
    replies: { 200: patViewSchema },
  },
  {
    method: 'PATCH',
    path: '/v1/pats/{id}',
    operationId: 'updatePatDailyCap',
    summary: 'Change a buyer PAT daily cap',
    auth: 'owner_session',
    body: patchPatBodySchema,
    replies: { 200: patViewSchema },
    errors: ['lineage_exceeds_parent'],
  },
];
