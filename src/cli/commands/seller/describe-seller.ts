/**
 * Plain-text descriptions of a seller and of an OpenAPI refresh report, shared by `xx service` (init, show)
 * and `xx refresh`. Values go through ./seller-format.ts, which strips control characters.
 */
import type { RefreshReport, SellerView } from '../../../shared/api-responses/seller-responses.js';
import { formatFields } from './seller-format.js';

export function describeSeller(s: SellerView): string {
  return formatFields([
    ['name', s.name],
    ['seller_id', s.seller_id],
    ['slug', s.slug],
    ['status', s.status],
    ['protocol', s.protocol],
    ['payout mode', s.payout_mode],
    ['origin', s.origin],
    ['origin verified', s.origin_verified ? `yes (${s.verified_at})` : 'no'],
    ['openapi url', s.openapi_url],
    ['capabilities', s.capabilities.join(', ')],
    ['banking', `${s.banking_state}${s.legal_entity ? ` (${s.legal_entity}, ${s.country})` : ''}`],
  ]);
}

/** One line out of a refresh report: `added 2 (a, b), changed 1 (c), removed 0, kept for ledger 0, unchanged 4`. */
export function refreshSummary(report: RefreshReport): string {
  const part = (list: string[], label: string) =>
    `${label} ${list.length}${list.length ? ` (${list.join(', ')})` : ''}`;
  return [
    part(report.added, 'added'),
    part(report.changed, 'changed'),
    part(report.removed, 'removed'),
    part(report.kept_for_ledger, 'kept for ledger'),
    `unchanged ${report.unchanged}`,
  ].join(', ');
}
