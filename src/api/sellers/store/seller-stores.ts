/**
 * The stores the sellers wing reads through, in the words of the services that use them (in-memory fakes in
 * test/support/fake-seller-stores.ts; PostgreSQL implementations in ./pg-seller-stores.ts):
 * - `GateCatalogueStore`: what the gate's service (../gate/gate-service.ts) reads — an account's managed-proxy
 *   (`mpp`) sellers, their endpoints and proven pay-to addresses, and the `mpp` seller that owns an endpoint.
 *
 * Defends: SQL scattered through routes and services (every query of the gate lives in one implementation);
 * an account reading another's sellers (each read is scoped to the account it is given). Does not defend: a
 * caller passing the wrong account (the service takes it from the authenticated gate PAT).
 */
import type { EndpointRow, SellerRow } from '../seller-views.js';

/** A seller's proven pay-to address, as stored. */
export interface SellerPayTo {
  seller_id: string;
  address: string;
}

export interface GateCatalogueStore {
  /** The account's `mpp` sellers, oldest first, at most `limit`. */
  managedSellersOf(accountId: string, limit: number): Promise<SellerRow[]>;
  /** The endpoints of `sellerIds`, oldest first, at most `limit` in all. */
  endpointsOf(sellerIds: readonly string[], limit: number): Promise<EndpointRow[]>;
  /** The proven pay-to addresses of `sellerIds`, oldest first. */
  payToOf(sellerIds: readonly string[]): Promise<SellerPayTo[]>;
  /** The `mpp` seller of `accountId` that owns `endpointId`; undefined for any other endpoint. */
  managedSellerOfEndpoint(accountId: string, endpointId: string): Promise<SellerRow | undefined>;
}
