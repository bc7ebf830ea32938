/**
 * The ledger page's revenue: totals (verified, pending, rejected) and verified revenue per endpoint as bars, from
 * GET /v1/ledger/revenue; revenue per day as a chart, summed from the listed rows (rejected rows left out).
 * Does not: fetch anything; the page passes what it loaded.
 */
import type { EndpointView } from '../../../../src/shared/api-responses/seller-responses';
import type { LedgerEntryView, RevenueSummary } from '../../../../src/shared/api-responses/seller-ledger-responses';
import { RevenueChart, type DayRevenue } from '../../ui/revenue-chart';
import { Empty, Loaded, type Load } from '../../ui/states';
import { usd } from '../../ui/money';
import { Card } from '../../ui/card';

export function perDay(rows: LedgerEntryView[]): DayRevenue[] {
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

export function RevenueCard({
  revenue,
  days,
  endpoints,
}: {
  revenue: Load<RevenueSummary>;
  days: DayRevenue[];
  endpoints: EndpointView[];
}) {
  return (
    <Card titleId="revenue-title" title="Revenue">
      <Loaded load={revenue} what="revenue">
        {(r) => (
          <>
            <p>
              Verified <strong data-testid="revenue-total">{usd(r.total_usd)}</strong> ({r.count} payments) · pending{' '}
              {usd(r.pending.total_usd)} ({r.pending.count}) · rejected {usd(r.rejected.total_usd)} ({r.rejected.count})
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
  );
}
