/**
 * What `GET /v1/sellers/{id}/discovery` answers (docs/api.md#a-sellers-view-of-discovery): each endpoint of the
 * seller as the public catalogue sees it — listed or not and why, its price on the catalogue's network, its
 * verified 30-day revenue and paid calls, and the uptime its gate reported. Defined once here: the API's route is
 * typed with it and the dashboard reads it.
 *
 * Defends: the dashboard and the API drifting apart. Does not defend: a reply of the right shape with wrong content.
 */
import { z } from 'zod';
import { discoveryUptimeSchema } from './discovery-responses.js';
import { endpointIdField, sellerIdField, usdField } from './response-fields.js';

/** Why an endpoint is not listed, in the order the catalogue's rule reads them. */
export const unlistedReasonSchema = z.enum([
  'seller_not_active',
  'gate_address_not_verified',
  'origin_not_set',
  'origin_not_verified',
  'not_priced',
  'no_pay_to',
]);
export type UnlistedReason = z.infer<typeof unlistedReasonSchema>;

export const sellerDiscoveryEndpointSchema = z.object({
  endpoint_id: endpointIdField,
  method: z.string().max(16),
  path: z.string().max(512),
  listed: z.boolean(),
  reasons: z.array(unlistedReasonSchema).max(6),
  price_usd: usdField,
  revenue_30d_usd: usdField,
  paid_calls_30d: z.number().int().min(0),
  uptime: discoveryUptimeSchema.optional(),
});
export type SellerDiscoveryEndpoint = z.infer<typeof sellerDiscoveryEndpointSchema>;

export const sellerDiscoverySchema = z.object({
  seller_id: sellerIdField,
  /** The catalogue's network (the API's default chain). */
  network: z.string().max(128),
  endpoints: z.array(sellerDiscoveryEndpointSchema).max(1000),
});
export type SellerDiscovery = z.infer<typeof sellerDiscoverySchema>;
