/**
 * In-memory fakes of the sellers wing's stores (src/api/sellers/store/seller-stores.ts), for unit tests of its
 * services without PostgreSQL: sellers (a unique slug), a seller's endpoints (a change set rolled back whole when
 * its work throws, as its transaction would be), and a gate catalogue store over the sellers, endpoints and
 * pay-to addresses a test puts in, and each seller's reported rows (the pending-row counts), read as the PostgreSQL stores read them (oldest first, bounded, scoped to the
 * account or seller). Pages are not cut: `pageOf` answers every row. Never imported by production code.
 */
import { isDeepStrictEqual } from 'node:util';
import type { EndpointRow, SellerRow } from '../../src/api/sellers/seller-views.js';
import type {
  EndpointChanges,
  EndpointSet,
  EndpointStore,
  GateCatalogueStore,
  NewEndpoint,
  NewSeller,
  RowPage,
  SellerChanges,
  SellerPayTo,
  SellerStore,
  SourcedEndpoint,
} from '../../src/api/sellers/store/seller-stores.js';
import type { PendingRowCounts } from '../../src/api/sellers/store/ledger-stores.js';

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

export class FakeSellerStore implements SellerStore {
  readonly sellers = new Map<string, SellerRow>();

  async slugTaken(slug: string): Promise<boolean> {
    return [...this.sellers.values()].some((s) => s.slug === slug);
  }

  async add(seller: NewSeller, maxPerAccount: number): Promise<'added' | 'slug_taken' | 'limit_reached'> {
    const held = [...this.sellers.values()].filter((s) => s.account_id === seller.account_id).length;
    if (held >= maxPerAccount) return 'limit_reached';
    if (await this.slugTaken(seller.slug)) return 'slug_taken';
    this.sellers.set(seller.id, { ...seller, verification_token: null, verified_at: null });
    return 'added';
  }

  async byId(sellerId: string): Promise<SellerRow | undefined> {
    return this.sellers.get(sellerId);
  }

  async pageOf(accountId: string): Promise<RowPage<SellerRow>> {
    const mine = [...this.sellers.values()].filter((s) => s.account_id === accountId);
    return { page: oldestFirst(mine, (s) => s.id), nextCursor: null };
  }

  async change(sellerId: string, changes: SellerChanges): Promise<SellerRow | undefined> {
    const seller = this.sellers.get(sellerId);
    if (!seller) return undefined;
    const changed = { ...seller, ...changes };
    this.sellers.set(sellerId, changed);
    return changed;
  }

  async keepVerificationToken(sellerId: string, token: string): Promise<string> {
    const seller = this.sellers.get(sellerId)!;
    seller.verification_token ??= token;
    return seller.verification_token;
  }

  async markOriginVerified(sellerId: string, origin: string, at: Date): Promise<SellerRow | undefined> {
    const seller = this.sellers.get(sellerId);
    return seller?.origin === origin
      ? this.change(sellerId, { verified_at: at, updated_at: seller.updated_at })
      : undefined;
  }
}

export class FakeEndpointStore implements EndpointStore {
  endpoints: SourcedEndpoint[] = [];
  /** Endpoint ids that ledger rows name. */
  readonly withLedger = new Set<string>();

  async pageOf(sellerId: string): Promise<RowPage<EndpointRow>> {
    return { page: await this.allOf(sellerId), nextCursor: null };
  }

  async allOf(sellerId: string): Promise<EndpointRow[]> {
    return oldestFirst(
      this.endpoints.filter((e) => e.seller_id === sellerId),
      (e) => e.id,
    );
  }

  async change(sellerId: string, endpointId: string, changes: EndpointChanges): Promise<EndpointRow | undefined> {
    const i = this.endpoints.findIndex((e) => e.id === endpointId && e.seller_id === sellerId);
    if (i < 0) return undefined;
    this.endpoints[i] = { ...this.endpoints[i]!, ...changes };
    return this.endpoints[i];
  }

  async remove(sellerId: string, endpointId: string): Promise<'removed' | 'not_found' | 'has_ledger'> {
    if (this.withLedger.has(endpointId)) return 'has_ledger';
    const before = this.endpoints.length;
    this.endpoints = this.endpoints.filter((e) => !(e.id === endpointId && e.seller_id === sellerId));
    return this.endpoints.length === before ? 'not_found' : 'removed';
  }

  async changeSet<T>(sellerId: string, work: (set: EndpointSet) => Promise<T>): Promise<T> {
    const saved = this.endpoints.map((e) => ({ ...e }));
    const set: EndpointSet = {
      list: async () => this.endpoints.filter((e) => e.seller_id === sellerId),
      discoveryDiffers: async (wanted) =>
        new Set(
          wanted
            .filter((w) => {
              const e = this.endpoints.find((row) => row.id === w.id && row.seller_id === sellerId);
              return e !== undefined && !isDeepStrictEqual(e.discovery ?? null, w.discovery);
            })
            .map((w) => w.id),
        ),
      add: async (endpoint: NewEndpoint) => {
        const row = { priced: true, source: 'manual', ...endpoint };
        this.endpoints.push(row);
        return row;
      },
      change: async (endpointId, changes) => void (await this.change(sellerId, endpointId, changes)),
      remove: async (endpointId) => void (await this.remove(sellerId, endpointId)),
      hasLedger: async (endpointId) => this.withLedger.has(endpointId),
      count: async () => this.endpoints.filter((e) => e.seller_id === sellerId).length,
    };
    try {
      return await work(set);
    } catch (err) {
      this.endpoints = saved;
      throw err;
    }
  }
}

export class FakePendingRowCounts implements PendingRowCounts {
  /** Each seller's reported rows: tx_hash → status. */
  readonly rows = new Map<string, Map<string, 'pending' | 'verified' | 'rejected'>>();

  report(sellerId: string, txHash: string, status: 'pending' | 'verified' | 'rejected' = 'pending'): void {
    const mine = this.rows.get(sellerId) ?? new Map<string, 'pending' | 'verified' | 'rejected'>();
    this.rows.set(sellerId, mine.set(txHash.toLowerCase(), status));
  }

  async reported(sellerId: string, hashes: readonly string[]): Promise<number> {
    const mine = this.rows.get(sellerId);
    return hashes.filter((h) => mine?.has(h)).length;
  }

  async pending(sellerId: string, upTo: number): Promise<number> {
    const mine = [...(this.rows.get(sellerId)?.values() ?? [])];
    return Math.min(mine.filter((s) => s === 'pending').length, upTo);
  }

  /** Each seller's account (a seller not named here is an account of its own, named like the seller). */
  readonly accountOf = new Map<string, string>();

  async pendingOfAccount(accountId: string, upTo: number): Promise<number> {
    let n = 0;
    for (const sellerId of this.rows.keys())
      if ((this.accountOf.get(sellerId) ?? sellerId) === accountId) n += await this.pending(sellerId, Infinity);
    return Math.min(n, upTo);
  }

  /** Every rejected row here counts as recent (the fake keeps no times). */
  async rejectedRecently(sellerId: string, _windowSeconds: number, upTo: number): Promise<number> {
    const mine = [...(this.rows.get(sellerId)?.values() ?? [])];
    return Math.min(mine.filter((s) => s === 'rejected').length, upTo);
  }
}
