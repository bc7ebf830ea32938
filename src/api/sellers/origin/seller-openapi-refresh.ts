/**
 * Reconciles a seller's ingested endpoints with its OpenAPI document (`openapi_url`, fetched through the
 * vetted outbound path of ./origin-verifier.ts and parsed by ./openapi-ingest.ts): new operations are added,
 * changed ones updated, vanished ones removed — kept, and reported as such, when ledger rows name them.
 * Endpoints added by hand are never touched. Idempotent: a second refresh of the same document changes nothing.
 * An operation without a price is stored unpriced (`priced = false`, not served by the gate); once the seller
 * prices it by hand, a document that still names no price leaves that price alone, and one that names a price
 * (`"0"` included) sets it and marks it priced.
 *
 * An operation that vanished from the document but is kept for its ledger rows loses its discovery (the
 * document no longer declares it), so a seller's ingested discovery is that of one document: at most
 * MAX_DISCOVERY_BYTES_PER_DOCUMENT (./openapi-discovery.ts). The stored discovery is compared where it is
 * stored (`EndpointSet.discoveryDiffers`, one statement), never read back and re-serialised here.
 *
 * Defends: two refreshes of one seller interleaving (one change set under the seller's lock, shared with endpoint
 * creation: `EndpointStore.changeSet`, ../store/seller-stores.ts — tried, never waited for: a refresh finding it
 * held answers 409 `seller_refresh_in_progress` at once);
 * a refresh taking the seller past its endpoint bound (refused whole); an endpoint with ledger rows being
 * removed; the fetch reaching what the outbound rules refuse (private addresses, other ports, redirects, more
 * than 1 MiB); a refresh, even of an unchanged document, reading back and re-serialising every row's discovery
 * on the event loop. Does not defend: a document whose prices the seller did not mean.
 */
import { parseUsd } from '../../../../policy/money.js';
import type { RefreshReport } from '../../../shared/api-responses/seller-responses.js';
import { generateId } from '../../auth/token-codec.js';
import { AppError } from '../../errors/app-error.js';
import { parseOpenApi, type IngestedEndpoint } from './openapi-ingest.js';
import { guardedFetchText, type OriginFetchOptions } from './origin-verifier.js';
import { assertWithinEndpointBound, DEFAULT_MAX_ENDPOINTS } from '../seller-endpoint-bound.js';
import type { EndpointRow, SellerRow } from '../seller-views.js';
import type { EndpointSet, EndpointStore } from '../store/seller-stores.js';

/**
 * Brings an ingested endpoint in line with its operation; true when it changed (`discoveryDiffers`: its stored
 * discovery is not the operation's). No price in the document: the endpoint keeps what it has (unpriced, or the
 * seller's own price).
 */
async function updateIngested(
  set: EndpointSet,
  current: EndpointRow,
  w: IngestedEndpoint,
  discoveryDiffers: boolean,
  now: Date,
): Promise<boolean> {
  const price = w.price === null ? current.price_micro : parseUsd(w.price).toString();
  const priced = w.price === null ? current.priced : true;
  const differs =
    current.price_micro !== price ||
    current.priced !== priced ||
    JSON.stringify(current.capabilities) !== JSON.stringify(w.capabilities) ||
    (current.path_pattern ?? null) !== w.path_pattern ||
    discoveryDiffers;
  if (!differs) return false;
  await set.change(current.id, {
    price_micro: price,
    priced,
    capabilities: w.capabilities,
    path_pattern: w.path_pattern,
    discovery: w.discovery,
    updated_at: now,
  });
  return true;
}

/** The largest OpenAPI document read. */
const MAX_DOCUMENT_BYTES = 1024 * 1024;

/** What the refresh is given (wired in ../seller-service.ts's createSellerServices). */
export interface OpenApiRefreshDeps {
  store: Pick<EndpointStore, 'changeSet'>;
  clock: () => Date;
  outbound: OriginFetchOptions;
  /** The most endpoints one seller may hold: a refresh that would add past it adds nothing (../seller-endpoint-bound.ts). */
  maxEndpoints?: number | undefined;
}

export class SellerOpenApiRefresh {
  private readonly store: Pick<EndpointStore, 'changeSet'>;
  private readonly clock: () => Date;
  private readonly outbound: OriginFetchOptions;
  private readonly maxEndpoints: number;

  constructor(deps: OpenApiRefreshDeps) {
    ({ store: this.store, clock: this.clock, outbound: this.outbound } = deps);
    this.maxEndpoints = deps.maxEndpoints ?? DEFAULT_MAX_ENDPOINTS;
  }

  async refresh(seller: SellerRow): Promise<RefreshReport> {
    if (!seller.openapi_url) throw new AppError('openapi_url_not_configured');
    const text = await guardedFetchText(new URL(seller.openapi_url), {
      ...this.outbound,
      maxBytes: MAX_DOCUMENT_BYTES,
      notFound: 'openapi_not_found',
    });
    const wanted = parseOpenApi(text);
    const now = this.clock();
    const report = {
      added: [] as string[],
      changed: [] as string[],
      removed: [] as string[],
      kept_for_ledger: [] as string[],
      unchanged: 0,
    };
    const key = (method: string, path: string) => `${method} ${path}`;
    // The first operation of each method and path (a later one naming it again is ignored).
    const operations = new Map<string, IngestedEndpoint>();
    for (const w of wanted) if (!operations.has(key(w.method, w.path))) operations.set(key(w.method, w.path), w);
    await this.store.changeSet(seller.id, async (set) => {
      const existing = await set.list();
      const byKey = new Map(existing.map((e) => [key(e.method, e.path), e]));
      const slugs = new Set(existing.map((e) => e.slug));
      // Every ingested endpoint's discovery against what it should hold: its operation's, or none once gone.
      const changedDiscovery = await set.discoveryDiffers(
        existing
          .filter((e) => e.source === 'openapi')
          .map((e) => ({ id: e.id, discovery: operations.get(key(e.method, e.path))?.discovery ?? null })),
      );
      for (const [k, w] of operations) {
        const current = byKey.get(k);
        if (!current) {
          let slug = w.slug;
          for (let i = 2; slugs.has(slug); i++) slug = `${w.slug.slice(0, 58)}-${i}`;
          slugs.add(slug);
          await set.add({
            id: generateId('ep_'),
            seller_id: seller.id,
            slug,
            method: w.method,
            path: w.path,
            path_pattern: w.path_pattern,
            price_micro: parseUsd(w.price ?? '0').toString(),
            priced: w.price !== null,
            route_prices: {},
            capabilities: w.capabilities,
            discovery: w.discovery,
            source: 'openapi',
            created_at: now,
            updated_at: now,
          });
          report.added.push(slug);
          continue;
        }
        if (
          current.source === 'openapi' &&
          (await updateIngested(set, current, w, changedDiscovery.has(current.id), now))
        )
          report.changed.push(current.slug);
        else report.unchanged++;
      }
      for (const e of existing) {
        if (e.source !== 'openapi' || operations.has(key(e.method, e.path))) continue;
        const used = await set.hasLedger(e.id);
        if (used) {
          report.kept_for_ledger.push(e.slug);
          if (changedDiscovery.has(e.id)) await set.change(e.id, { discovery: null, updated_at: now });
        } else {
          await set.remove(e.id);
          report.removed.push(e.slug);
        }
      }
      if (report.added.length > 0) await assertWithinEndpointBound(set, this.maxEndpoints);
    });
    return { seller_id: seller.id, openapi_url: seller.openapi_url, ...report };
  }
}
