/**
 * A seller's and an endpoint's database rows and the views the API answers with. The view types are
 * derived from the response schemas in src/shared/api-responses/ (which the `xx` CLI parses replies with),
 * so a field added, dropped or retyped here and not there fails to compile.
 *
 * Defends: the API answering a shape its clients do not expect; a seller's verification token leaking
 * into a view (it is in the row, not in any view). Does not defend: rows of the wrong shape in the database
 * (the migrations' constraints do).
 */
import { formatUsd } from '../../../policy/money.js';
import type { BankingView, EndpointView, SellerView } from '../../shared/api-responses/seller-responses.js';
import type { GateEndpoint } from '../../shared/api-responses/gate-responses.js';
import type { EndpointDiscovery } from './origin/openapi-discovery.js';

export interface SellerRow {
  id: string;
  account_id: string;
  name: string;
  slug: string;
  openapi_url: string | null;
  capabilities: string[];
  protocol: SellerView['protocol'];
  payout_mode: SellerView['payout_mode'];
  legal_entity: string | null;
  country: string | null;
  banking_state: SellerView['banking_state'];
  status: SellerView['status'];
  origin: string | null;
  verification_token: string | null;
  verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface EndpointRow {
  id: string;
  seller_id: string;
  slug: string;
  method: string;
  path: string;
  path_pattern: string | null;
  price_micro: string;
  route_prices: Record<string, string>;
  capabilities: string[];
  /** False for an OpenAPI operation ingested without a price (not sold by the gate until priced). */
  priced: boolean;
  /** What the OpenAPI operation declares for buyers (the public catalogue); null or absent for manual endpoints. */
  discovery?: EndpointDiscovery | null;
  created_at: Date;
  updated_at: Date;
}

export const sellerView = (s: SellerRow): SellerView => ({
  seller_id: s.id,
  name: s.name,
  slug: s.slug,
  openapi_url: s.openapi_url,
  capabilities: s.capabilities,
  protocol: s.protocol,
  payout_mode: s.payout_mode,
  legal_entity: s.legal_entity,
  country: s.country,
  banking_state: s.banking_state,
  status: s.status,
  origin: s.origin,
  origin_verified: s.verified_at !== null,
  verified_at: s.verified_at?.toISOString() ?? null,
  created_at: s.created_at.toISOString(),
  updated_at: s.updated_at.toISOString(),
});

/** What selling an endpoint takes: its id and slug, the route it answers and its prices (the gate's catalogue). */
export const endpointTerms = (
  e: Pick<EndpointRow, 'id' | 'slug' | 'method' | 'path' | 'path_pattern' | 'price_micro' | 'route_prices' | 'priced'>,
): GateEndpoint => ({
  endpoint_id: e.id,
  slug: e.slug,
  method: e.method,
  path: e.path,
  path_pattern: e.path_pattern,
  price: formatUsd(BigInt(e.price_micro)),
  route_prices: e.route_prices,
  priced: e.priced,
});

export const endpointView = (e: EndpointRow): EndpointView => {
  const { endpoint_id, ...terms } = endpointTerms(e);
  return {
    endpoint_id,
    seller_id: e.seller_id,
    ...terms,
    capabilities: e.capabilities,
    created_at: e.created_at.toISOString(),
    updated_at: e.updated_at.toISOString(),
  };
};

export const bankingView = (s: SellerRow): BankingView => ({
  seller_id: s.id,
  legal_entity: s.legal_entity,
  country: s.country,
  state: s.banking_state,
});

/** A slug out of a name: lower-case letters, digits and dashes, at most 48 characters (`service` when nothing is left). */
export function slugify(name: string): string {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return base || 'service';
}
