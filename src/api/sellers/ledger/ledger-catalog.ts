/**
 * The catalogue entries of the seller ledger (rows the seller middleware reports, the listing, revenue and CSV
 * export) and of the gate's routes (its catalogue, the rows it reports); ./api-catalog.ts puts every family
 * together.
 *
 * Defends: a client generated from the document meeting these routes, replies or errors undescribed. Does
 * not defend: how a reported row is verified on chain (src/api/services/).
 */
import type { CatalogEntry } from '../../http/openapi/catalog-entry.js';
import { LEDGER_ROW } from '../../http/openapi/catalog-error-lists.js';
import {
  ledgerBatchResultSchema,
  ledgerPageSchema,
  ledgerReportedSchema,
  revenueSummarySchema,
} from '../../../shared/api-responses/seller-ledger-responses.js';
import { gateCatalogueSchema } from '../../../shared/api-responses/gate-responses.js';
import { catalogueQuerySchema } from '../seller-schemas.js';
import { ledgerBatchBodySchema, ledgerReportBodySchema } from '../../../shared/ledger-report-schema.js';
import { ledgerQuerySchema } from '../seller-schemas.js';

export const LEDGER_CATALOG: CatalogEntry[] = [
  {
    method: 'POST',
    path: '/v1/ledger',
    operationId: 'reportLedgerRow',
    summary:
      'Report a ledger row (seller middleware; idempotent per seller and tx_hash; pending until verified on chain)',
    auth: 'service',
    body: ledgerReportBodySchema,
    replies: { 200: ledgerReportedSchema, 201: ledgerReportedSchema },
    errors: LEDGER_ROW,
  },
  {
    method: 'GET',
    path: '/v1/gate/catalogue',
    operationId: 'readGateCatalogue',
    summary: "The account's managed-proxy (mpp) sellers, origins, pay-to and endpoints (the gate)",
    auth: 'gate',
    query: catalogueQuerySchema,
    replies: { 200: gateCatalogueSchema },
  },
  {
    method: 'POST',
    path: '/v1/gate/ledger',
    operationId: 'reportGateLedgerRow',
    summary: 'Report one ledger row of a paid request the gate settled (endpoint_id required)',
    auth: 'gate',
    body: ledgerReportBodySchema,
    replies: { 200: ledgerReportedSchema, 201: ledgerReportedSchema },
    errors: LEDGER_ROW,
  },
  {
    method: 'POST',
    path: '/v1/gate/ledger/batch',
    operationId: 'reportGateLedgerBatch',
    summary: 'Report up to 100 gate ledger rows; per-row outcome',
    auth: 'gate',
    body: ledgerBatchBodySchema,
    replies: { 200: ledgerBatchResultSchema },
    errors: ['ledger_pending_limit', 'ledger_rejected_budget_exhausted'],
  },
  {
    method: 'POST',
    path: '/v1/ledger/batch',
    operationId: 'reportLedgerBatch',
    summary: 'Report up to 100 ledger rows; per-row outcome (seller middleware)',
    auth: 'service',
    body: ledgerBatchBodySchema,
    replies: { 200: ledgerBatchResultSchema },
    errors: ['seller_suspended', 'ledger_pending_limit', 'ledger_rejected_budget_exhausted'],
  },
  {
    method: 'GET',
    path: '/v1/ledger',
    operationId: 'listLedgerRows',
    summary: 'List ledger rows (filters, cursor)',
    auth: 'owner_session_or_service',
    query: ledgerQuerySchema,
    replies: { 200: ledgerPageSchema },
  },
  {
    method: 'GET',
    path: '/v1/ledger/revenue',
    operationId: 'getLedgerRevenue',
    summary: 'Revenue summary of verified rows (pending and rejected shown apart)',
    auth: 'owner_session_or_service',
    query: ledgerQuerySchema,
    replies: { 200: revenueSummarySchema },
  },
  {
    method: 'GET',
    path: '/v1/ledger/export',
    operationId: 'exportLedgerCsv',
    summary: 'CSV export (format=csv)',
    auth: 'owner_session_or_service',
    query: ledgerQuerySchema,
    replies: { 200: { mediaTypes: ['text/csv'], description: 'The ledger rows as CSV (an attachment)' } },
  },
];
