/**
 * The catalogue entry of the gate's uptime report (./uptime-routes.ts); ../../api-catalog.ts puts every family
 * together. Defends: a generated client meeting the route undescribed. Does not defend: what the counts say.
 */
import type { CatalogEntry } from '../../http/openapi/catalog-entry.js';
import { uptimeReportBodySchema, uptimeReportReplySchema } from '../../../shared/uptime-report-schema.js';

export const UPTIME_CATALOG: CatalogEntry[] = [
  {
    method: 'POST',
    path: '/v1/gate/uptime',
    operationId: 'reportGateUptime',
    summary: "Report hourly counts of what the gate's sellers' origins answered (per bucket: stored or refused)",
    auth: 'gate',
    body: uptimeReportBodySchema,
    replies: { 200: uptimeReportReplySchema },
  },
];
