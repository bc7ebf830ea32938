/**
 * A seller's view of discovery (docs/api.md#a-sellers-view-of-discovery): for each of its endpoints, whether the
 * public catalogue lists it (as the catalogue's statement decides, ./seller-listing-store.ts) and, when not, the
 * reasons a person can act on — the seller is suspended, sells through its account's gate whose public address
 * the platform has not verified (on the catalogue's network), has no origin or has not verified it, the endpoint
 * is unpriced, or no payee is known on the catalogue's network — with its price, verified 30-day revenue and paid
 * calls on that network (what the catalogue shows), and gate-reported uptime. Pure.
 *
 * Defends: a reason list that contradicts `listed` (a listed endpoint has none). Does not defend: reasons the
 * statement does not know (it reads the same columns as the catalogue).
 */
import { formatUsd } from '../../../policy/money.js';
import type { SellerDiscoveryEndpoint, UnlistedReason } from '../../shared/api-responses/seller-discovery-responses.js';
import { uptimeOf } from './discovery-mapping.js';
import type { SellerListingRow } from './seller-listing-store.js';

export function unlistedReasons(row: SellerListingRow): UnlistedReason[] {
  if (row.listed) return [];
  const reasons: UnlistedReason[] = [];
  if (row.status !== 'active') reasons.push('seller_not_active');
  if (row.protocol !== 'x402' && !row.gate_verified) reasons.push('gate_address_not_verified');
  if (row.origin === null) reasons.push('origin_not_set');
  else if (!row.origin_verified) reasons.push('origin_not_verified');
  if (!row.priced) reasons.push('not_priced');
  if (row.pay_to === null) reasons.push('no_pay_to');
  return reasons;
}

export function sellerDiscoveryEndpointOf(row: SellerListingRow): SellerDiscoveryEndpoint {
  return {
    endpoint_id: row.endpoint_id,
    method: row.method,
    path: row.path,
    listed: row.listed,
    reasons: unlistedReasons(row),
    price_usd: formatUsd(BigInt(row.price_micro)),
    revenue_30d_usd: formatUsd(BigInt(row.revenue_micro)),
    paid_calls_30d: Number(row.paid_calls),
    ...uptimeOf(row),
  };
}
