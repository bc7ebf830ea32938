/**
 * The ledger page's filter form: dates, endpoint and verification status, applied on submit (submitting the
 * filters already applied reloads them), and the CSV export of the applied filters. The form holds what is
 * being typed; the page holds what is applied.
 * Does not: fetch anything; `onApply` and `onExport` are the page's.
 */
import { useState } from 'preact/hooks';
import type { EndpointView } from '../../../../src/shared/api-responses/seller-responses';
import { TextField } from '../../ui/text-field';
import { SelectField } from '../../ui/select-field';
import type { LedgerFilters } from './ledger-query';

const STATUSES: ReadonlyArray<{ value: LedgerFilters['status']; label: string }> = [
  { value: '', label: 'All' },
  { value: 'verified', label: 'Verified' },
  { value: 'pending', label: 'Pending' },
  { value: 'rejected', label: 'Rejected' },
];

export function LedgerFilterForm({
  applied,
  endpoints,
  onApply,
  onExport,
}: {
  applied: LedgerFilters;
  endpoints: EndpointView[];
  onApply: (filters: LedgerFilters) => void;
  onExport: () => void;
}) {
  const [filters, setFilters] = useState<LedgerFilters>(applied);
  const set = (patch: Partial<LedgerFilters>) => setFilters({ ...filters, ...patch });
  const endpointOptions = [
    { value: '', label: 'All' },
    ...endpoints.map((e) => ({ value: e.endpoint_id, label: `${e.method} ${e.path}` })),
  ];
  return (
    <form
      class="row filters"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(filters);
      }}
    >
      <TextField id="lf-from" label="From" value={filters.from} onValue={(v) => set({ from: v })} type="date" />
      <TextField id="lf-to" label="To" value={filters.to} onValue={(v) => set({ to: v })} type="date" />
      <SelectField
        id="lf-endpoint"
        label="Endpoint"
        value={filters.endpoint_id}
        onValue={(v) => set({ endpoint_id: v })}
        options={endpointOptions}
      />
      <SelectField
        id="lf-status"
        label="Status"
        value={filters.status}
        onValue={(v) => set({ status: v })}
        options={STATUSES}
      />
      <button type="submit" class="primary">
        Apply
      </button>
      <button type="button" onClick={onExport}>
        Export CSV
      </button>
    </form>
  );
}
