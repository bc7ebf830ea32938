/**
 * Each seller's endpoints compiled for ledger route matching (src/shared/endpoint-matcher.ts), kept per process
 * and rebuilt only when the seller's `endpoints_version` moved — a number PostgreSQL triggers raise in the
 * transaction of every change to the seller's endpoints (migration 20261128150000), so every API process sees a
 * change as soon as it commits. A report reads that number (one primary-key lookup) and matches in memory.
 *
 * Defends: one seller's endpoints costing every report a read and a parse of all of them. The version is read
 * before the endpoints, so a compiled form is never labelled newer than what it holds. Concurrent reports of a
 * seller whose version moved share one load. Bounded: at most `maxSellers` sellers are kept (least recently
 * used dropped first, in O(1): lru-cache), each with at most what the endpoint bound lets it have.
 * Does not defend: a seller that holds more endpoints than the bound from before it existed (loaded whole, once
 * per change).
 */
import { compileEndpointMatcher, type EndpointMatcher } from '../../../shared/endpoint-matcher.js';
import { LRUCache } from 'lru-cache';
import type { EndpointRoutes } from '../store/ledger-stores.js';

interface Entry {
  version: string;
  matcher: Promise<EndpointMatcher>;
}

export class EndpointMatcherCache {
  private readonly entries: LRUCache<string, Entry>;

  constructor(
    private readonly routes: EndpointRoutes,
    maxSellers = 1_000,
  ) {
    this.entries = new LRUCache({ max: maxSellers });
  }

  /** The endpoint of `sellerId` a report of `method` (upper case) and `route` names, or null. */
  async endpointFor(sellerId: string, method: string, route: string): Promise<string | null> {
    const version = await this.routes.versionOf(sellerId);
    if (version === undefined) return null;
    return (await this.matcherAt(sellerId, version)).lookup(method, route);
  }

  private matcherAt(sellerId: string, version: string): Promise<EndpointMatcher> {
    const cached = this.entries.get(sellerId); // most recently used now
    if (cached && cached.version === version) return cached.matcher;
    const matcher = this.load(sellerId);
    const entry = { version, matcher };
    this.entries.set(sellerId, entry);
    // A failed load is not kept: the next report tries again.
    matcher.catch(() => {
      if (this.entries.peek(sellerId) === entry) this.entries.delete(sellerId);
    });
    return matcher;
  }

  private async load(sellerId: string): Promise<EndpointMatcher> {
    return compileEndpointMatcher(await this.routes.matchableOf(sellerId));
  }
}
