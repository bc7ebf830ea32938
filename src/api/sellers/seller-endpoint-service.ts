/**
 * A seller's priced endpoints: created, listed page by page (keyset on created_at, id), updated, deleted
 * (refused while ledger rows name the endpoint), and all at once as the seller middleware's route table
 * (`POST /v1/auth/verify`). The endpoints an OpenAPI document declares are reconciled by
 * ./origin/seller-openapi-refresh.ts.
 *
 * Defends: an endpoint with ledger rows disappearing under them (checked, and the ledger's foreign key as a
 * second line); one seller's endpoint reached through another (every query names the seller); a seller adding
 * endpoints without limit (./seller-endpoint-bound.ts).
 * Does not defend: prices the seller did not mean (the seller sets them). Reads and writes through
 * `EndpointStore` (./store/seller-stores.ts).
 */
import { parseUsd } from '../../../policy/money.js';
import type { EndpointPage, EndpointView, SellerAuthVerify } from '../../shared/api-responses/seller-responses.js';
import { generateId } from '../auth/token-codec.js';
import type { PageRequest } from '../db/keyset-cursor.js';
import { AppError } from '../errors/app-error.js';
import { assertWithinEndpointBound, DEFAULT_MAX_ENDPOINTS } from './seller-endpoint-bound.js';
import { endpointView, slugify, type SellerRow } from './seller-views.js';
import type { EndpointChanges, EndpointStore } from './store/seller-stores.js';

export class SellerEndpointService {
  constructor(
    private readonly store: EndpointStore,
    private readonly clock: () => Date,
    /** The most endpoints one seller may hold (./seller-endpoint-bound.ts). */
    private readonly maxEndpoints = DEFAULT_MAX_ENDPOINTS,
  ) {}

  async create(
    seller: SellerRow,
    input: {
      slug?: string | undefined;
      path: string;
      method?: string | undefined;
      price: string;
      route_prices?: Record<string, string> | undefined;
      path_pattern?: string | undefined;
      capabilities?: string[] | undefined;
    },
  ): Promise<EndpointView> {
    const now = this.clock();
    const id = generateId('ep_');
    return this.store.changeSet(seller.id, async (set) => {
      const row = await set.add({
        id,
        seller_id: seller.id,
        slug: input.slug ?? slugify(`${input.method ?? 'GET'} ${input.path}`),
        method: input.method ?? 'GET',
        path: input.path,
        path_pattern: input.path_pattern ?? null,
        price_micro: parseUsd(input.price).toString(),
        route_prices: input.route_prices ?? {},
        capabilities: input.capabilities ?? [],
        created_at: now,
        updated_at: now,
      });
      await assertWithinEndpointBound(set, this.maxEndpoints);
      return endpointView(row);
    });
  }

  /** A page of the seller's endpoints, oldest first. */
  async list(seller: SellerRow, request: PageRequest): Promise<EndpointPage> {
    const { page, nextCursor } = await this.store.pageOf(seller.id, request);
    return { endpoints: page.map(endpointView), next_cursor: nextCursor };
  }

  async update(
    seller: SellerRow,
    endpointId: string,
    patch: {
      price?: string | undefined;
      route_prices?: Record<string, string> | undefined;
      path_pattern?: string | null | undefined;
      capabilities?: string[] | undefined;
      method?: string | undefined;
      path?: string | undefined;
    },
  ): Promise<EndpointView> {
    const changes: EndpointChanges = { updated_at: this.clock() };
    if (patch.price !== undefined) {
      changes.price_micro = parseUsd(patch.price).toString();
      changes.priced = true; // a price the seller set ("0": free by choice)
    }
    if (patch.route_prices !== undefined) changes.route_prices = patch.route_prices;
    if (patch.path_pattern !== undefined) changes.path_pattern = patch.path_pattern;
    if (patch.capabilities !== undefined) changes.capabilities = patch.capabilities;
    if (patch.method !== undefined) changes.method = patch.method;
    if (patch.path !== undefined) changes.path = patch.path;
    const row = await this.store.change(seller.id, endpointId, changes);
    if (!row) throw new AppError('endpoint_not_found');
    return endpointView(row);
  }

  async delete(seller: SellerRow, endpointId: string): Promise<void> {
    const outcome = await this.store.remove(seller.id, endpointId);
    if (outcome === 'has_ledger')
      throw new AppError('endpoint_has_ledger', {
        message: 'This endpoint has ledger rows; change its price instead of deleting it.',
      });
    if (outcome === 'not_found') throw new AppError('endpoint_not_found');
  }

  /** What the seller middleware needs on its first paid request: the seller and every endpoint at once (its route table). */
  async routeTable(seller: SellerRow): Promise<Omit<SellerAuthVerify, 'collect_to'>> {
    const endpoints = await this.store.allOf(seller.id);
    return {
      seller_id: seller.id,
      slug: seller.slug,
      protocol: seller.protocol,
      payout_mode: seller.payout_mode,
      status: seller.status,
      endpoints: endpoints.map(endpointView),
    };
  }
}
