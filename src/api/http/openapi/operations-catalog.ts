/**
 * The catalogue entries of the operations routes (probes, metrics, this document and its reference page);
 * ./api-catalog.ts puts every family together (the Treasury accounts: src/api/platform/treasury-catalog.ts).
 *
 * Defends: a client generated from the document meeting these routes undescribed. Does not defend: what the
 * probes check (src/api/http/routes/).
 */
import type { CatalogEntry, RawReply } from './catalog-entry.js';
import { livenessSchema, openApiDocumentSchema, readinessSchema } from '../../../shared/api-responses/ops-responses.js';

const PROMETHEUS: RawReply = { mediaTypes: ['text/plain'], description: 'Prometheus text exposition (version 0.0.4)' };

export const OPERATIONS_CATALOG: CatalogEntry[] = [
  {
    method: 'GET',
    path: '/livez',
    operationId: 'livez',
    summary: 'Liveness',
    auth: 'none',
    replies: { 200: livenessSchema },
  },
  {
    method: 'GET',
    path: '/health',
    operationId: 'health',
    summary: 'Liveness (alias)',
    auth: 'none',
    replies: { 200: livenessSchema },
  },
  {
    method: 'GET',
    path: '/readyz',
    operationId: 'readyz',
    summary: 'Readiness: database and signer',
    auth: 'none',
    replies: { 200: readinessSchema, 503: readinessSchema },
  },
  {
    method: 'GET',
    path: '/metrics',
    operationId: 'getMetrics',
    summary:
      'Prometheus metrics, on this listener unless TREASURY_METRICS_PORT gives them one of their own (then 404 here; production mode needs one, or TREASURY_METRICS_ON_PUBLIC_LISTENER=1)',
    auth: 'none',
    replies: { 200: PROMETHEUS },
    errors: ['not_found'],
  },
  {
    method: 'GET',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    auth: 'none',
    replies: { 200: openApiDocumentSchema },
  },
  {
    method: 'GET',
    path: '/docs',
    operationId: 'getApiReference',
    summary: 'This document rendered as a reference page (Swagger UI; strict CSP, no inline script)',
    auth: 'none',
    replies: { 200: { mediaTypes: ['text/html'], description: 'The reference page' } },
  },
  {
    method: 'GET',
    path: '/docs/{asset}',
    operationId: 'getApiReferenceAsset',
    summary: "A static asset of the reference page (Swagger UI's script and style sheet, the page's initializer)",
    auth: 'none',
    replies: {
      200: {
        mediaTypes: ['text/javascript', 'text/css', 'image/png'],
        description: 'The asset, served from this origin',
      },
    },
    errors: ['not_found'],
  },
];
