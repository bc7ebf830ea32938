/**
 * The PostgreSQL implementations of the sellers wing's stores (./seller-stores.ts): every query they stand for,
 * and nothing else. Each read is bounded (a limit, or the sellers it is given) and scoped to the account or
 * sellers it names.
 *
 * Defends: SQL outside a store; an unbounded read from a request. Does not defend: rows of the wrong shape in
 * the database (the migrations' constraints do).
 */
import type { Knex } from 'knex';
import type { EndpointRow, SellerRow } from '../seller-views.js';
import type { GateCatalogueStore, SellerPayTo } from './seller-stores.js';

const OLDEST_FIRST = [{ column: 'created_at' }, { column: 'id' }];

export class PgGateCatalogueStore implements GateCatalogueStore {
  constructor(private readonly knex: Knex) {}

  async managedSellersOf(accountId: string, limit: number): Promise<SellerRow[]> {
    return (await this.knex('sellers')
      .where({ account_id: accountId, protocol: 'mpp' })
      .orderBy(OLDEST_FIRST)
      .limit(limit)) as SellerRow[];
  }

  async endpointsOf(sellerIds: readonly string[], limit: number): Promise<EndpointRow[]> {
    if (!sellerIds.length) return [];
    return (await this.knex('endpoints')
      .whereIn('seller_id', [...sellerIds])
      .orderBy(OLDEST_FIRST)
      .limit(limit)) as EndpointRow[];
  }

  async payToOf(sellerIds: readonly string[]): Promise<SellerPayTo[]> {
    if (!sellerIds.length) return [];
    return (await this.knex('sellers_pay_to')
      .whereIn('seller_id', [...sellerIds])
      .orderBy([{ column: 'created_at' }, { column: 'address' }])
      .select('seller_id', 'address')) as SellerPayTo[];
  }

  async managedSellerOfEndpoint(accountId: string, endpointId: string): Promise<SellerRow | undefined> {
    return (await this.knex('endpoints as e')
      .join('sellers as s', 's.id', 'e.seller_id')
      .where({ 'e.id': endpointId, 's.account_id': accountId, 's.protocol': 'mpp' })
      .first('s.*')) as SellerRow | undefined;
  }
}
