/**
 * A seller's ledger (GET /v1/ledger) with filters (dates, endpoint, verification status), page by page; the
 * same filters export CSV (GET /v1/ledger/export, fetched with the bearer and saved from a blob URL, so no
 * token travels in a link); revenue per day (from the listed rows) as a chart and per endpoint (GET
 * /v1/ledger/revenue, verified rows) as bars.
 */
import { useMemo, useState } from 'preact/hooks';
import type { EndpointView } from '../../../src/shared/api-responses/seller-responses';
import type {
  LedgerEntryView,
  LedgerPage,
  RevenueSummary,
} from '../../../src/shared/api-responses/seller-ledger-responses';
import { api, bearer, reply } from '../api/client';
import { RevenueChart, type DayRevenue } from '../ui/revenue-chart';
import { Empty, ErrorBox, Loaded, useLoad } from '../ui/states';
import { usd } from '../ui/money';
import { when } from '../ui/format';
import { DataTable } from '../ui/data-table';
import { TextField } from '../ui/text-field';
import { Card } from '../ui/card';

interface Filters {
  from: string;
  to: string;
  endpoint_id: string;
  status: '' | 'pending' | 'verified' | 'rejected';
}

function query(sellerId: string, f: Filters) {
  return {
    seller_id: sellerId,
    ...(f.from ? { from: `${f.from}T00:00:00Z` } : {}),
    ...(f.to ? { to: `${f.to}T23:59:59.999Z` } : {}),
    ...(f.endpoint_id ? { endpoint_id: f.endpoint_id } : {}),
    ...(f.status ? { status: f.status } : {}),
  };
}

async function ledgerRows(
  sellerId: string,
  token: string,
  f: Filters,
  pages = 10,
): Promise<{ rows: LedgerEntryView[]; more: boolean }> {
  const rows: LedgerEntryView[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < pages; i++) {
    const page = await reply<LedgerPage>(
      api.GET('/v1/ledger', {
        params: { query: { ...query(sellerId, f), limit: 100, cursor } },
        headers: bearer(token),
      }),
    );
    rows.push(...page.entries);
    if (!page.next_cursor) return { rows, more: false };
    cursor = page.next_cursor;
  }
  return { rows, more: true };
}

function perDay(rows: LedgerEntryView[]): DayRevenue[] {
  const days = new Map<string, DayRevenue>();
  for (const r of rows) {
    if (r.status === 'rejected') continue;
    const day = r.created_at.slice(0, 10);
    const d = days.get(day) ?? { day, verified: 0, pending: 0 };
    d[r.status === 'verified' ? 'verified' : 'pending'] += Number(r.amount_usd);
    days.set(day, d);
  }
  return [...days.values()].sort((a, b) => a.day.localeCompare(b.day));
}

async function exportCsv(sellerId: string, token: string, f: Filters): Promise<void> {
  const res = await api.GET('/v1/ledger/export', {
    params: { query: { ...query(sellerId, f), format: 'csv' } },
    headers: bearer(token),
    parseAs: 'blob',
  });
  if (!res.response.ok) await reply(Promise.resolve(res)); // throws the API's error
  const url = URL.createObjectURL(res.data as Blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = `ledger-${sellerId}.csv`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function EndpointBars({ revenue, endpoints }: { revenue: RevenueSummary; endpoints: EndpointView[] }) {
  const max = Math.max(0.000001, ...revenue.by_endpoint.map((e) => Number(e.total_usd)));
  const name = (id: string | null) => endpoints.find((e) => e.endpoint_id === id)?.path ?? id ?? 'unmatched route';
  if (revenue.by_endpoint.length === 0) return <Empty>No verified revenue yet.</Empty>;
  return (
    <ul class="bars" aria-label="Verified revenue per endpoint">
      {revenue.by_endpoint.map((e) => (
        <li key={e.endpoint_id ?? 'none'}>
          <span class="bar-label">
            <code>{name(e.endpoint_id)}</code> · {usd(e.total_usd)} ({e.count})
          </span>
          <span class="bar" style={{ width: `${(Number(e.total_usd) / max) * 100}%` }} />
        </li>
      ))}
    </ul>
  );
}

export function SellerLedger({
  sellerId,
  token,
  endpoints,
}: {
  sellerId: string;
  token: string;
  endpoints: EndpointView[];
}) {
  const [filters, setFilters] = useState<Filters>({ from: '', to: '', endpoint_id: '', status: '' });
  const [applied, setApplied] = useState(filters);
  const [exportError, setExportError] = useState<unknown>(null);
  const key = JSON.stringify(applied);
  const [rows, reload] = useLoad(() => ledgerRows(sellerId, token, applied), [sellerId, token, key]);
  const [revenue] = useLoad(
    () =>
      reply<RevenueSummary>(
        api.GET('/v1/ledger/revenue', { params: { query: query(sellerId, applied) }, headers: bearer(token) }),
      ),
    [sellerId, token, key],
  );
  const days = useMemo(() => (rows.state === 'ok' ? perDay(rows.data.rows) : []), [rows]);
  const endpointPath = (id: string | null) => endpoints.find((e) => e.endpoint_id === id)?.path ?? '—';
  const set = (patch: Partial<Filters>) => setFilters({ ...filters, ...patch });
  return (
    <>
      <Card titleId="revenue-title" title="Revenue">
        <Loaded load={revenue} what="revenue">
          {(r) => (
            <>
              <p>
                Verified <strong data-testid="revenue-total">{usd(r.total_usd)}</strong> ({r.count} payments) · pending{' '}
                {usd(r.pending.total_usd)} ({r.pending.count}) · rejected {usd(r.rejected.total_usd)} (
                {r.rejected.count})
              </p>
              <div class="grid">
                <div>
                  <h3>Per day</h3>
                  {days.length ? <RevenueChart days={days} /> : <Empty>No payments in this range.</Empty>}
                </div>
                <div>
                  <h3>Per endpoint</h3>
                  <EndpointBars revenue={r} endpoints={endpoints} />
                </div>
              </div>
            </>
          )}
        </Loaded>
      </Card>
      <Card titleId="ledger-title" title="Ledger">
        <form
          class="row filters"
          onSubmit={(e) => {
            e.preventDefault();
            setApplied(filters);
            if (JSON.stringify(filters) === key) reload();
          }}
        >
          <TextField id="lf-from" label="From" value={filters.from} onValue={(v) => set({ from: v })} type="date" />
          <TextField id="lf-to" label="To" value={filters.to} onValue={(v) => set({ to: v })} type="date" />
          <div class="field">
            <label for="lf-endpoint">Endpoint</label>
            <select
              id="lf-endpoint"
              value={filters.endpoint_id}
              onChange={(e) => set({ endpoint_id: (e.target as HTMLSelectElement).value })}
            >
              <option value="">All</option>
              {endpoints.map((e) => (
                <option key={e.endpoint_id} value={e.endpoint_id}>
                  {e.method} {e.path}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="lf-status">Status</label>
            <select
              id="lf-status"
              value={filters.status}
              onChange={(e) => set({ status: (e.target as HTMLSelectElement).value as Filters['status'] })}
            >
              <option value="">All</option>
              <option value="verified">Verified</option>
              <option value="pending">Pending</option>
              <option value="rejected">Rejected</option>
            </select>
          </div>
          <button type="submit" class="primary">
            Apply
          </button>
          <button
            type="button"
            onClick={() => {
              setExportError(null);
              exportCsv(sellerId, token, applied).catch(setExportError);
            }}
          >
            Export CSV
          </button>
        </form>
        {exportError ? <ErrorBox error={exportError} /> : null}
        <Loaded load={rows} what="the ledger">
          {({ rows: list, more }) =>
            list.length === 0 ? (
              <Empty>
                No ledger rows match. A paid call to one of the seller’s endpoints appears here within seconds.
              </Empty>
            ) : (
              <DataTable
                caption="Ledger rows"
                columns={['When', 'Endpoint', 'Amount', 'Status', 'Payer', 'Transaction']}
              >
                {list.map((r) => (
                  <tr key={r.id} data-testid="ledger-row">
                    <th scope="row">
                      {when(r.created_at)}
                      <div class="meta">
                        <code>{r.id}</code>
                      </div>
                    </th>
                    <td>
                      <code>{r.route ?? endpointPath(r.endpoint_id)}</code>
                    </td>
                    <td>{usd(r.amount_usd)}</td>
                    <td>
                      <span
                        class={`badge ${r.status === 'verified' ? 'ok' : r.status === 'rejected' ? 'bad' : 'warn'}`}
                      >
                        {r.status}
                      </span>
                      {r.reason ? <div class="meta">{r.reason}</div> : null}
                    </td>
                    <td class="address">
                      <code>{r.payer}</code>
                    </td>
                    <td class="address">
                      <code>{r.tx_hash}</code>
                    </td>
                  </tr>
                ))}
              </DataTable>
            )
          }
        </Loaded>
      </Card>
    </>
  );
}
