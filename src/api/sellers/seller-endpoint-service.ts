/**
 * A seller's priced endpoints: created, listed page by page (keyset on created_at, id), updated, deleted
 * (refused while ledger rows name the endpoint), and all at once as the seller middleware's route table
 * (`POST /v1/auth/verify`). The endpoints an OpenAPI document declares are reconciled by
 * ./seller-openapi-refresh.ts.
 *
 * Defends: an endpoint with ledger rows disappearing under them (checked, and the ledger's foreign key as a
 * second line); one seller's endpoint reached through another (every query names the seller); a seller adding
 * endpoints without limit (./seller-endpoint-bound.ts).
 * Does not defend: prices the seller did not mean (the seller sets them).
 */
import type { Knex } from 'knex';
import { parseUsd } from '../../../policy/money.js';
import type { EndpointPage, EndpointView, SellerAuthVerify } from '../../shared/api-responses/seller-responses.js';
import { generateId } from '../auth/token-codec.js';
import { readKeysetPage, type PageRequest } from '../db/keyset-cursor.js';
import { AppError } from '../errors/app-error.js';
import { assertWithinEndpointBound, DEFAULT_MAX_ENDPOINTS, lockSellerEndpoints } from './seller-endpoint-bound.js';
import { endpointView, slugify, type EndpointRow, type SellerRow } from './seller-views.js';

/** The id shape of the rows the list's page cursors name. */
const ENDPOINT_ID = /^ep_[0-9a-f]{24}$/;

export class SellerEndpointService {
  constructor(
    private readonly knex: Knex,
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
    try {
      return await this.knex.transaction(async (trx) => {
        await lockSellerEndpoints(trx, seller.id);
        const [row] = (await trx('endpoints')
          .insert({
            id,
            seller_id: seller.id,
            slug: input.slug ?? slugify(`${input.method ?? 'GET'} ${input.path}`),
            method: input.method ?? 'GET',
            path: input.path,
            path_pattern: input.path_pattern ?? null,
            price_micro: parseUsd(input.price).toString(),
            route_prices: JSON.stringify(input.route_prices ?? {}),
            capabilities: JSON.stringify(input.capabilities ?? []),
            created_at: now,
            updated_at: now,
          })
          .returning('*')) as EndpointRow[];
        await assertWithinEndpointBound(trx, seller.id, this.maxEndpoints);
        return endpointView(row!);
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new AppError('endpoint_exists');
      throw err;
    }
  }

  /** A page of the seller's endpoints, oldest first. */
  async list(seller: SellerRow, request: PageRequest): Promise<EndpointPage> {
    const { page, nextCursor } = await readKeysetPage<EndpointRow>(
      this.knex('endpoints').where({ seller_id: seller.id }),
      request,
      ENDPOINT_ID,
    );
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
    const changes: Record<string, unknown> = { updated_at: this.clock() };
    if (patch.price !== undefined) {
      changes.price_micro = parseUsd(patch.price).toString();
      changes.priced = true; // a price the seller set ("0": free by choice)
    }
    if (patch.route_prices !== undefined) changes.route_prices = JSON.stringify(patch.route_prices);
    if (patch.path_pattern !== undefined) changes.path_pattern = patch.path_pattern;
    if (patch.capabilities !== undefined) changes.capabilities = JSON.stringify(patch.capabilities);
    if (patch.method !== undefined) changes.method = patch.method;
    if (patch.path !== undefined) changes.path = patch.path;
    const [row] = (await this.knex('endpoints')
      .where({ id: endpointId, seller_id: seller.id })
      .update(changes)
      .returning('*')) as EndpointRow[];
    if (!row) throw new AppError('endpoint_not_found');
    return endpointView(row);
  }

  async delete(seller: SellerRow, endpointId: string): Promise<void> {
    const hasLedger = () =>
      new AppError('endpoint_has_ledger', {
        message: 'This endpoint has ledger rows; change its price instead of deleting it.',
      });
    if (await endpointHasLedger(this.knex, seller.id, endpointId)) throw hasLedger();
    const deleted = await this.knex('endpoints')
      .where({ id: endpointId, seller_id: seller.id })
      .delete()
      .catch((err: { code?: string }) => {
        // A ledger row reported between the check and the delete: its foreign key keeps the endpoint.
        if (err.code === '23503') throw hasLedger();
        throw err;
      });
    if (deleted === 0) throw new AppError('endpoint_not_found');
  }

  /** What the seller middleware needs on its first paid request: the seller and every endpoint at once (its route table). */
  async routeTable(seller: SellerRow): Promise<Omit<SellerAuthVerify, 'collect_to'>> {
    const endpoints = (await this.knex('endpoints')
      .where({ seller_id: seller.id })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])) as EndpointRow[];
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

/**
 * Whether any ledger row names the endpoint: one lookup in the seller's per-day revenue (seller_revenue_days,
 * on its primary key's seller prefix, verified rows) and one among its unverified rows (their partial index),
 * rather than a scan of every ledger row, which has no endpoint index.
 */
export async function endpointHasLedger(
  knex: Knex | Knex.Transaction,
  sellerId: string,
  endpointId: string,
): Promise<boolean> {
  if (await knex('seller_revenue_days').where({ seller_id: sellerId, endpoint_key: endpointId }).first('day'))
    return true;
  return !!(await knex('ledger_entries')
    .where({ seller_id: sellerId, endpoint_id: endpointId })
    .whereNot({ status: 'verified' })
    .first('id'));
}
