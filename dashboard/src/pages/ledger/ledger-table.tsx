/**
 * The ledger page's rows: when, endpoint (the reported route, else the endpoint's path), amount, verification
 * status with its reason, payer and transaction, one row each (data-testid="ledger-row").
 * Does not: page or filter; it shows the rows it is given.
 */
import type { EndpointView } from '../../../../src/shared/api-responses/seller-responses';
import type { LedgerEntryView } from '../../../../src/shared/api-responses/seller-ledger-responses';
import { Empty } from '../../ui/states';
import { usd } from '../../ui/money';
import { when } from '../../ui/format';
import { DataTable } from '../../ui/data-table';

const badgeOf = (status: LedgerEntryView['status']) =>
  status === 'verified' ? 'ok' : status === 'rejected' ? 'bad' : 'warn';

function LedgerRow({ row: r, endpointPath }: { row: LedgerEntryView; endpointPath: (id: string | null) => string }) {
  return (
    <tr data-testid="ledger-row">
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
        <span class={`badge ${badgeOf(r.status)}`}>{r.status}</span>
        {r.reason ? <div class="meta">{r.reason}</div> : null}
      </td>
      <td class="address">
        <code>{r.payer}</code>
      </td>
      <td class="address">
        <code>{r.tx_hash}</code>
      </td>
    </tr>
  );
}

export function LedgerTable({ rows, endpoints }: { rows: LedgerEntryView[]; endpoints: EndpointView[] }) {
  const endpointPath = (id: string | null) => endpoints.find((e) => e.endpoint_id === id)?.path ?? '—';
  if (rows.length === 0)
    return (
      <Empty>No ledger rows match. A paid call to one of the seller’s endpoints appears here within seconds.</Empty>
    );
  return (
    <DataTable caption="Ledger rows" columns={['When', 'Endpoint', 'Amount', 'Status', 'Payer', 'Transaction']}>
      {rows.map((r) => (
        <LedgerRow key={r.id} row={r} endpointPath={endpointPath} />
      ))}
    </DataTable>
  );
}
