/**
 * A seller's ledger (GET /v1/ledger) with filters (dates, endpoint, verification status), page by page; the
 * same filters export CSV (GET /v1/ledger/export, fetched with the bearer and saved from a blob URL, so no
 * token travels in a link); revenue per day (from the listed rows) as a chart and per endpoint (GET
 * /v1/ledger/revenue, verified rows) as bars. This page holds the applied filters and the loads; its parts are
 * in ./ledger/ (the reads, the revenue card, the filter form, the rows).
 */
import { useMemo, useState } from 'preact/hooks';
import type { EndpointView } from '../../../src/shared/api-responses/seller-responses';
import type { RevenueSummary } from '../../../src/shared/api-responses/seller-ledger-responses';
import { api, bearer, reply } from '../api/client';
import { ErrorBox, Loaded, useLoad } from '../ui/states';
import { Card } from '../ui/card';
import { exportCsv, ledgerQuery, ledgerRows, NO_FILTERS, type LedgerFilters } from './ledger/ledger-query';
import { perDay, RevenueCard } from './ledger/revenue-card';
import { LedgerFilterForm } from './ledger/ledger-filters';
import { LedgerTable } from './ledger/ledger-table';

export function SellerLedger({
  sellerId,
  token,
  endpoints,
}: {
  sellerId: string;
  token: string;
  endpoints: EndpointView[];
}) {
  const [applied, setApplied] = useState<LedgerFilters>(NO_FILTERS);
  const [exportError, setExportError] = useState<unknown>(null);
  const key = JSON.stringify(applied);
  const [rows, reload] = useLoad(() => ledgerRows(sellerId, token, applied), [sellerId, token, key]);
  const [revenue] = useLoad(
    () =>
      reply<RevenueSummary>(
        api.GET('/v1/ledger/revenue', { params: { query: ledgerQuery(sellerId, applied) }, headers: bearer(token) }),
      ),
    [sellerId, token, key],
  );
  const days = useMemo(() => (rows.state === 'ok' ? perDay(rows.data.rows) : []), [rows]);
  const apply = (filters: LedgerFilters) => {
    setApplied(filters);
    if (JSON.stringify(filters) === key) reload();
  };
  const exportApplied = () => {
    setExportError(null);
    exportCsv(sellerId, token, applied).catch(setExportError);
  };
  return (
    <>
      <RevenueCard revenue={revenue} days={days} endpoints={endpoints} />
      <Card titleId="ledger-title" title="Ledger">
        <LedgerFilterForm applied={applied} endpoints={endpoints} onApply={apply} onExport={exportApplied} />
        {exportError ? <ErrorBox error={exportError} /> : null}
        <Loaded load={rows} what="the ledger">
          {({ rows: list }) => <LedgerTable rows={list} endpoints={endpoints} />}
        </Loaded>
      </Card>
    </>
  );
}
