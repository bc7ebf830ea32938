/**
 * How many endpoints one seller may hold (TREASURY_SELLER_MAX_ENDPOINTS, 1,000 by default), for every way an
 * endpoint is added: `POST /v1/sellers/{id}/endpoints` (./seller-endpoint-service.ts) and OpenAPI refresh
 * (./seller-openapi-refresh.ts). Both change a seller's endpoints under one per-seller advisory lock, in a
 * transaction, and call `assertWithinEndpointBound` after writing: a write that leaves the seller above the
 * bound is refused whole (`endpoint_limit_reached`, nothing added), and two writes cannot both pass the check.
 *
 * Defends: a seller growing its endpoint set without limit — every ledger report and route table of that
 * seller reads it, and a matching set in the thousands cost other tenants their latency. Does not defend: a
 * seller above the bound from before it existed (it keeps its endpoints and may change or remove them, but adds
 * none until it is below the bound).
 */
import type { Knex } from 'knex';
import { AppError } from '../errors/app-error.js';

export const DEFAULT_MAX_ENDPOINTS = 1_000;

/** Serialises every change to one seller's endpoint set, in the caller's transaction. */
export async function lockSellerEndpoints(trx: Knex.Transaction, sellerId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 19))', [`seller:${sellerId}`]);
}

/** After adding endpoints under the lock: refuses (rolling the transaction back) if the seller now holds more than `max`. */
export async function assertWithinEndpointBound(trx: Knex.Transaction, sellerId: string, max: number): Promise<void> {
  const [row] = (await trx('endpoints').where({ seller_id: sellerId }).count({ n: '*' })) as Array<{ n: string }>;
  if (Number(row?.n ?? 0) > max) throw new AppError('endpoint_limit_reached', { fields: { max_endpoints: max } });
}
