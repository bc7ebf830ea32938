/**
 * The stores the sellers wing reads through, in the words of the services that use them (in-memory fakes in
 * test/support/fake-seller-stores.ts; PostgreSQL implementations in ./pg-seller-stores.ts):
 * - `SellerStore`: sellers — added, found, listed page by page, changed; the origin's verification token and mark
 *   (../seller-service.ts, ../origin/seller-origin-verification.ts);
 * - `EndpointStore`: a seller's endpoints — listed, changed, removed, and changed as a set under the seller's
 *   lock (`EndpointSet`: ../seller-endpoint-service.ts, ../origin/seller-openapi-refresh.ts);
 * - `GateCatalogueStore`: what the gate's service (../gate/gate-service.ts) reads — an account's managed-proxy
 *   (`mpp`) sellers, their endpoints and proven pay-to addresses, and the `mpp` seller that owns an endpoint.
 *
 * Defends: SQL scattered through routes and services (every query of the gate lives in one implementation);
 * an account reading another's sellers (each read is scoped to the account it is given). Does not defend: a
 * caller passing the wrong account (the service takes it from the authenticated gate PAT).
 */
import type { PageRequest } from '../../db/keyset-cursor.js';
import type { EndpointRow, SellerRow } from '../seller-views.js';

/** One page of rows, oldest first, and the cursor of the next (null after the last). */
export interface RowPage<R> {
  page: R[];
  nextCursor: string | null;
}

/** A seller as registered (what the database adds: its verification token and mark, none yet). */
export type NewSeller = Omit<SellerRow, 'verification_token' | 'verified_at'>;

/** What may change on a seller. */
export type SellerChanges = Partial<
  Pick<
    SellerRow,
    | 'name'
    | 'openapi_url'
    | 'capabilities'
    | 'payout_mode'
    | 'origin'
    | 'verified_at'
    | 'status'
    | 'legal_entity'
    | 'country'
    | 'banking_state'
  >
> & { updated_at: Date };

export interface SellerStore {
  /** Whether a seller already holds `slug`. */
  slugTaken(slug: string): Promise<boolean>;
  /**
   * Adds the seller unless its account already holds `maxPerAccount` sellers (counted under a lock on the
   * account, so two additions cannot both pass) or its slug is taken (the unique index decides, not slugTaken).
   */
  add(seller: NewSeller, maxPerAccount: number): Promise<'added' | 'slug_taken' | 'limit_reached'>;
  byId(sellerId: string): Promise<SellerRow | undefined>;
  /** A page of the account's sellers, oldest first (the cursor checked before any query). */
  pageOf(accountId: string, request: PageRequest): Promise<RowPage<SellerRow>>;
  /** Applies `changes`; the seller as it stands after, undefined when there is no such seller. */
  change(sellerId: string, changes: SellerChanges): Promise<SellerRow | undefined>;
  /** Keeps `token` as the seller's verification token unless it has one; the token it keeps. */
  keepVerificationToken(sellerId: string, token: string): Promise<string>;
  /**
   * Marks `origin` verified at `at`, only while it is still the seller's origin (its next re-check one interval
   * later: src/api/sellers/proofs/); undefined otherwise.
   */
  markOriginVerified(sellerId: string, origin: string, at: Date): Promise<SellerRow | undefined>;
}

/** An endpoint as added (the database adds nothing but defaults the caller may name). */
export type NewEndpoint = Omit<EndpointRow, 'priced'> & { priced?: boolean; source?: 'manual' | 'openapi' };

/** What may change on an endpoint. */
export type EndpointChanges = Partial<
  Pick<
    EndpointRow,
    'price_micro' | 'priced' | 'route_prices' | 'path_pattern' | 'capabilities' | 'method' | 'path' | 'discovery'
  >
> & { updated_at: Date };

/** An endpoint with where it came from: added by hand, or ingested from the seller's OpenAPI document. */
export type SourcedEndpoint = EndpointRow & { source: string };

/** An endpoint and the discovery it should hold (none: null). */
export interface WantedDiscovery {
  id: string;
  discovery: NonNullable<EndpointRow['discovery']> | null;
}

/** One seller's endpoints, changed as a set in one transaction under the seller's lock (EndpointStore.changeSet). */
export interface EndpointSet {
  /** The seller's endpoints; `discovery` may be left out (compare it with `discoveryDiffers`). */
  list(): Promise<SourcedEndpoint[]>;
  /**
   * The ids, among `wanted`, of the seller's endpoints whose stored `discovery` is not the value given (compared
   * as JSON values where it is stored, never read back).
   */
  discoveryDiffers(wanted: ReadonlyArray<WantedDiscovery>): Promise<Set<string>>;
  /** Adds the endpoint; `endpoint_exists` when its slug or route is taken. */
  add(endpoint: NewEndpoint): Promise<EndpointRow>;
  change(endpointId: string, changes: EndpointChanges): Promise<void>;
  remove(endpointId: string): Promise<void>;
  /** Whether any ledger row names the endpoint. */
  hasLedger(endpointId: string): Promise<boolean>;
  /** How many endpoints the seller holds now. */
  count(): Promise<number>;
}

export interface EndpointStore {
  /** A page of the seller's endpoints, oldest first. */
  pageOf(sellerId: string, request: PageRequest): Promise<RowPage<EndpointRow>>;
  /** Every endpoint of the seller, oldest first (the middleware's route table). */
  allOf(sellerId: string): Promise<EndpointRow[]>;
  /** Applies `changes` to the seller's endpoint; undefined when the seller has no such endpoint. */
  change(sellerId: string, endpointId: string, changes: EndpointChanges): Promise<EndpointRow | undefined>;
  /**
   * Removes the seller's endpoint: `removed`, `not_found`, or `has_ledger` when a ledger row names it (checked
   * first, and the ledger's foreign key as a second line).
   */
  remove(sellerId: string, endpointId: string): Promise<'removed' | 'not_found' | 'has_ledger'>;
  /**
   * Runs `work` on the seller's endpoints in one transaction under the seller's lock; a throw rolls it back. The
   * lock is tried, never waited for: held by another change of the seller's set (a refresh, an endpoint being
   * added), it throws 409 `seller_refresh_in_progress` at once, holding no connection.
   */
  changeSet<T>(sellerId: string, work: (set: EndpointSet) => Promise<T>): Promise<T>;
}

/** A seller's proven pay-to address, as stored. */
export interface SellerPayTo {
  seller_id: string;
  address: string;
}

/**
 * An endpoint as the gate's catalogue reads it: what selling it takes, and its declarations (capability tags,
 * input and output schemas) only while the catalogue's declaration budget lasts — null past it.
 */
export type GateEndpointRow = Pick<
  EndpointRow,
  'id' | 'seller_id' | 'slug' | 'method' | 'path' | 'path_pattern' | 'price_micro' | 'route_prices' | 'priced'
> & {
  capabilities: string[] | null;
  discovery?: Pick<NonNullable<EndpointRow['discovery']>, 'input_schema' | 'output_schema'> | null;
};

export interface GateCatalogueStore {
  /** The account's `mpp` sellers, oldest first, at most `limit`. */
  managedSellersOf(accountId: string, limit: number): Promise<SellerRow[]>;
  /**
   * The endpoints of `sellerIds`, oldest first, at most `limit` in all; declarations (capabilities and the
   * input and output schemas) only on the oldest, while their JSON text adds up to at most `declarationBytes`.
   */
  endpointsOf(sellerIds: readonly string[], limit: number, declarationBytes: number): Promise<GateEndpointRow[]>;
  /** The proven pay-to addresses of `sellerIds`, oldest first. */
  payToOf(sellerIds: readonly string[]): Promise<SellerPayTo[]>;
  /** The `mpp` seller of `accountId` that owns `endpointId`; undefined for any other endpoint. */
  managedSellerOfEndpoint(accountId: string, endpointId: string): Promise<SellerRow | undefined>;
}
