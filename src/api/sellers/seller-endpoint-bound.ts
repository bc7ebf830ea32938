/**
 * How many endpoints one seller may hold (TREASURY_SELLER_MAX_ENDPOINTS, 1,000 by default), for every way an
 * endpoint is added: `POST /v1/sellers/{id}/endpoints` (./seller-endpoint-service.ts) and OpenAPI refresh
 * (./origin/seller-openapi-refresh.ts). Both change a seller's endpoints as one set, under a per-seller lock in
 * one transaction (`EndpointStore.changeSet`, ./store/seller-stores.ts), and call `assertWithinEndpointBound`
 * after writing: a write that leaves the seller above the
 * bound is refused whole (`endpoint_limit_reached`, nothing added), and two writes cannot both pass the check.
 *
 * Defends: a seller growing its endpoint set without limit — every ledger report and route table of that
 * seller reads it, and a matching set in the thousands cost other tenants their latency. Does not defend: a
 * seller above the bound from before it existed (it keeps its endpoints and may change or remove them, but adds
 * none until it is below the bound).
 */
import { AppError } from '../errors/app-error.js';
import type { EndpointSet } from './store/seller-stores.js';

export const DEFAULT_MAX_ENDPOINTS = 1_000;

/** After adding endpoints to the set: refuses (rolling its change back) if the seller now holds more than `max`. */
export async function assertWithinEndpointBound(set: Pick<EndpointSet, 'count'>, max: number): Promise<void> {
  if ((await set.count()) > max) throw new AppError('endpoint_limit_reached', { fields: { max_endpoints: max } });
}
