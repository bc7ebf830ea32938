/**
 * The ledger page's reads: its filters as the query of GET /v1/ledger, /v1/ledger/revenue and /v1/ledger/export
 * (dates widened to whole UTC days), the rows page by page (at most ten pages of 100), and the CSV export,
 * fetched with the bearer and saved from a blob URL, so that no token travels in a link.
 * Does not: check the filters (the API's schemas do) or keep anything beyond the page.
 */
import type { LedgerEntryView, LedgerPage } from '../../../../src/shared/api-responses/seller-ledger-responses';
import { api, bearer, reply } from '../../api/client';

export interface LedgerFilters {
  from: string;
  to: string;
  endpoint_id: string;
  status: '' | 'pending' | 'verified' | 'rejected';
}

export const NO_FILTERS: LedgerFilters = { from: '', to: '', endpoint_id: '', status: '' };

export function ledgerQuery(sellerId: string, f: LedgerFilters) {
  return {
    seller_id: sellerId,
    ...(f.from ? { from: `${f.from}T00:00:00Z` } : {}),
    ...(f.to ? { to: `${f.to}T23:59:59.999Z` } : {}),
    ...(f.endpoint_id ? { endpoint_id: f.endpoint_id } : {}),
    ...(f.status ? { status: f.status } : {}),
  };
}

export async function ledgerRows(
  sellerId: string,
  token: string,
  f: LedgerFilters,
  pages = 10,
): Promise<{ rows: LedgerEntryView[]; more: boolean }> {
  const rows: LedgerEntryView[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < pages; i++) {
    const page = await reply<LedgerPage>(
      api.GET('/v1/ledger', {
        params: { query: { ...ledgerQuery(sellerId, f), limit: 100, cursor } },
        headers: bearer(token),
      }),
    );
    rows.push(...page.entries);
    if (!page.next_cursor) return { rows, more: false };
    cursor = page.next_cursor;
  }
  return { rows, more: true };
}

export async function exportCsv(sellerId: string, token: string, f: LedgerFilters): Promise<void> {
  const res = await api.GET('/v1/ledger/export', {
    params: { query: { ...ledgerQuery(sellerId, f), format: 'csv' } },
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
