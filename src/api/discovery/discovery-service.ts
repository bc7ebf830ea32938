/**
 * The public catalogue's two reads: a filtered page of every listed resource (GET /discovery/resources) and a
 * text search over them, best matches first (GET /discovery/search). Filters the catalogue cannot match (a
 * type other than `http`, a scheme other than `exact`, another network, an extension other than `bazaar`)
 * answer an empty page without a query; the rest is one store read per page (./discovery-store.ts), mapped
 * to the Bazaar shapes (./discovery-mapping.ts) and cached briefly, bounded by size (./discovery-cache.ts); a
 * read the cache cannot answer takes one of the process's few read slots (./discovery-read-slots.ts), or is
 * refused (503 `database_busy`) when they are all taken.
 *
 * Defends: revenue counted over any window but the last 30 UTC days (today included), or on any network but the
 * catalogue's (the store counts `network` only); anonymous reads holding the database pool or growing the
 * process's memory without bound (the read slots, the cache's byte bound). Does not defend: who asks (the
 * catalogue is public; the routes are rate limited per address).
 */
import type { DiscoveryResourcesPage, DiscoverySearchPage } from '../../shared/api-responses/discovery-responses.js';
import { MAX_DISCOVERY_OFFSET } from '../../shared/api-responses/discovery-responses.js';
import type { ChainInfo } from '../../shared/chain-registry.js';
import { DiscoveryCache } from './discovery-cache.js';
import { DiscoveryReadSlots } from './discovery-read-slots.js';
import { discoveryResourceOf } from './discovery-mapping.js';
import type { DiscoveryFilters, DiscoveryResourcesQuery, DiscoverySearchQuery } from './discovery-schemas.js';
import { searchPatterns } from './discovery-search-terms.js';
import type { DiscoveryPage, DiscoveryPageRequest, DiscoveryStore } from './discovery-store.js';

/** Revenue and paid calls are counted over this many UTC days, today included. */
export const REVENUE_WINDOW_DAYS = 30;

export interface DiscoveryServiceDeps {
  store: Pick<DiscoveryStore, 'page'>;
  /** The network (and its USDC) buyers are asked to pay on: the API's default chain. */
  chain: ChainInfo;
  clock: () => Date;
  cacheMs: number;
  /** Store reads at once, at most (DISCOVERY_READ_SLOTS by default). */
  readSlots?: number | undefined;
}

/** The first UTC day of the revenue window ending on `now`'s day, as `YYYY-MM-DD`. */
export function revenueWindowStart(now: Date): string {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(day - (REVENUE_WINDOW_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
}

export class DiscoveryService {
  /** The answer cache (read by tests: what it keeps and weighs). */
  readonly cache: DiscoveryCache<DiscoveryPage>;
  private readonly slots: DiscoveryReadSlots;

  constructor(private readonly deps: DiscoveryServiceDeps) {
    this.cache = new DiscoveryCache(deps.cacheMs);
    this.slots = new DiscoveryReadSlots(deps.readSlots);
  }

  async resources(q: DiscoveryResourcesQuery): Promise<DiscoveryResourcesPage> {
    const page = await this.read(q, { limit: q.limit, offset: q.offset });
    return {
      x402Version: 2,
      items: page.rows.map((row) => discoveryResourceOf(row, this.deps.chain)),
      pagination: { limit: q.limit, offset: q.offset, total: page.total },
    };
  }

  async matching(q: DiscoverySearchQuery): Promise<DiscoverySearchPage> {
    const page = await this.read(q, { limit: q.limit, offset: q.cursor, patterns: searchPatterns(q.query) });
    const next = q.cursor + page.rows.length;
    const more = page.rows.length > 0 && next < page.total && next <= MAX_DISCOVERY_OFFSET;
    return {
      x402Version: 2,
      resources: page.rows.map((row) => discoveryResourceOf(row, this.deps.chain)),
      partialResults: more,
      pagination: { limit: q.limit, cursor: more ? String(next) : null },
    };
  }

  /** Whether the filters can match anything the catalogue lists (every resource is http, exact, on one network). */
  private matchable(f: DiscoveryFilters): boolean {
    return (
      (f.type === undefined || f.type === 'http') &&
      (f.scheme === undefined || f.scheme === 'exact') &&
      (f.extensions === undefined || f.extensions === 'bazaar') &&
      (f.network === undefined || f.network === this.deps.chain.network)
    );
  }

  private read(
    f: DiscoveryFilters,
    page: Pick<DiscoveryPageRequest, 'limit' | 'offset' | 'patterns'>,
  ): Promise<DiscoveryPage> {
    if (!this.matchable(f)) return Promise.resolve({ rows: [], total: 0 });
    const request: DiscoveryPageRequest = {
      network: this.deps.chain.network,
      payTo: f.payTo?.toLowerCase(),
      since: revenueWindowStart(this.deps.clock()),
      ...page,
    };
    return this.cache.get(JSON.stringify(request), () => this.slots.run(() => this.deps.store.page(request)));
  }
}
