/**
 * In-memory fakes of the sellers wing's stores (src/api/sellers/store/seller-stores.ts), for unit tests of its
 * services without PostgreSQL: a gate catalogue store over the sellers, endpoints and pay-to addresses a test
 * puts in, read as the PostgreSQL store reads them (oldest first, bounded, scoped to the account). Never
 * imported by production code.
 */
import type { EndpointRow, SellerRow } from '../../src/api/sellers/seller-views.js';
import type { GateCatalogueStore, SellerPayTo } from '../../src/api/sellers/store/seller-stores.js';

type Dated = { created_at: Date };
const oldestFirst = <T extends Dated>(rows: readonly T[], key: (r: T) => string): T[] =>
  [...rows].sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || key(a).localeCompare(key(b)));

export class FakeGateCatalogueStore implements GateCatalogueStore {
  readonly sellers: SellerRow[] = [];
  readonly endpoints: EndpointRow[] = [];
  readonly payTo: Array<SellerPayTo & Dated> = [];
  reads = 0;

  async managedSellersOf(accountId: string, limit: number): Promise<SellerRow[]> {
    this.reads++;
    const mine = this.sellers.filter((s) => s.account_id === accountId && s.protocol === 'mpp');
    return oldestFirst(mine, (s) => s.id).slice(0, limit);
  }

  async endpointsOf(sellerIds: readonly string[], limit: number): Promise<EndpointRow[]> {
    this.reads++;
    const theirs = this.endpoints.filter((e) => sellerIds.includes(e.seller_id));
    return oldestFirst(theirs, (e) => e.id).slice(0, limit);
  }

  async payToOf(sellerIds: readonly string[]): Promise<SellerPayTo[]> {
    this.reads++;
    const theirs = this.payTo.filter((p) => sellerIds.includes(p.seller_id));
    return oldestFirst(theirs, (p) => p.address).map(({ seller_id, address }) => ({ seller_id, address }));
  }

  async managedSellerOfEndpoint(accountId: string, endpointId: string): Promise<SellerRow | undefined> {
    this.reads++;
    const endpoint = this.endpoints.find((e) => e.id === endpointId);
    return this.sellers.find((s) => s.id === endpoint?.seller_id && s.account_id === accountId && s.protocol === 'mpp');
  }
}
