/**
 * What the public catalogue answers (GET /discovery/resources, GET /discovery/search; docs/api.md#discovery):
 * the shapes the official Bazaar client (`withBazaar(new HTTPFacilitatorClient({ url }))` of
 * `@x402/extensions` 2.27) reads — `DiscoveryResourcesResponse` and `SearchDiscoveryResourcesResponse` — with
 * one extra key per resource, `treasury`, which that client passes through untouched: the seller, its verified
 * revenue and paid calls over 30 days on the catalogue's network. Defined once here: the API's mapping is typed with the derived types,
 * and the `xx discover` command and the MCP `discover` tool parse replies with the schemas.
 *
 * Defends: the catalogue and its clients drifting apart silently. Does not defend: a reply of the right shape
 * with wrong content. Keys are listed in the order the API writes them.
 */
import { z } from 'zod';
import { evmAddressField, rawAmountField, sellerIdField, timestampField, usdField } from './response-fields.js';

/** At most this many resources in one page of either route. */
export const MAX_DISCOVERY_LIMIT = 100;
/** The furthest a page may start (offset, or search cursor). */
export const MAX_DISCOVERY_OFFSET = 10_000;

/** One `accepts` entry: the x402 v2 PaymentRequirements a buyer of the resource is asked for. */
export const discoveryAcceptSchema = z.object({
  scheme: z.literal('exact'),
  network: z.string().max(64),
  amount: rawAmountField,
  asset: evmAddressField,
  payTo: evmAddressField,
  maxTimeoutSeconds: z.number().int().min(1).max(86_400),
  extra: z.object({ name: z.string().max(64), version: z.string().max(16) }),
});
export type DiscoveryAccept = z.infer<typeof discoveryAcceptSchema>;

/**
 * The endpoint's uptime over the last 30 days as the seller's own gate reported it (hourly counts of what the
 * origin answered, below 500, or failed): `ratio` answered / `samples`; absent when nothing was reported. Not
 * checked by the platform (docs/security-model.md#uptime-as-reported-by-the-sellers-gate).
 */
export const discoveryUptimeSchema = z.object({
  ratio: z.number().min(0).max(1),
  samples: z.number().int().min(1),
  window_days: z.literal(30),
  reported_by: z.literal('seller_gate'),
});
export type DiscoveryUptime = z.infer<typeof discoveryUptimeSchema>;

/** What the platform adds to each resource: whose it is, and what verified ledger rows say of it. */
export const discoveryTreasurySchema = z.object({
  seller_id: sellerIdField,
  seller_slug: z.string().max(128),
  seller_name: z.string().max(128),
  endpoint_slug: z.string().max(128),
  /** The price as USD (the same amount as `accepts[].amount`, in USDC's 6 decimals). */
  price_usd: usdField,
  /** Verified ledger rows on the catalogue's network (`accepts[].network`) only, over the last 30 UTC days (today included). */
  revenue_30d_usd: usdField,
  paid_calls_30d: z.number().int().min(0),
  /** Always true: only sellers whose origin is verified are listed. */
  origin_verified: z.literal(true),
  uptime: discoveryUptimeSchema.optional(),
});
export type DiscoveryTreasury = z.infer<typeof discoveryTreasurySchema>;

/** The Bazaar extension of a resource: how to call it (`info`) and the JSON Schema of that (`schema`). */
export const discoveryBazaarSchema = z.object({
  info: z.record(z.string(), z.unknown()),
  schema: z.record(z.string(), z.unknown()),
});

export const discoveryResourceSchema = z.object({
  resource: z.string().max(2048),
  type: z.literal('http'),
  x402Version: z.literal(2),
  accepts: z.array(discoveryAcceptSchema).max(8),
  lastUpdated: timestampField,
  description: z.string().max(512).optional(),
  mimeType: z.string().max(128).optional(),
  serviceName: z.string().max(32).optional(),
  tags: z.array(z.string().max(64)).max(5).optional(),
  extensions: z.object({ bazaar: discoveryBazaarSchema }).optional(),
  treasury: discoveryTreasurySchema,
});
export type DiscoveryResourceView = z.infer<typeof discoveryResourceSchema>;

/** GET /discovery/resources: one page and where it sits (`total`: every listed resource the filters match). */
export const discoveryResourcesPageSchema = z.object({
  x402Version: z.literal(2),
  items: z.array(discoveryResourceSchema).max(MAX_DISCOVERY_LIMIT),
  pagination: z.object({
    limit: z.number().int().min(1).max(MAX_DISCOVERY_LIMIT),
    offset: z.number().int().min(0).max(MAX_DISCOVERY_OFFSET),
    total: z.number().int().min(0),
  }),
});
export type DiscoveryResourcesPage = z.infer<typeof discoveryResourcesPageSchema>;

/** GET /discovery/search: the best matches first; `cursor` continues (null on the last page). */
export const discoverySearchPageSchema = z.object({
  x402Version: z.literal(2),
  resources: z.array(discoveryResourceSchema).max(MAX_DISCOVERY_LIMIT),
  partialResults: z.boolean(),
  pagination: z.object({
    limit: z.number().int().min(1).max(MAX_DISCOVERY_LIMIT),
    cursor: z.string().max(16).nullable(),
  }),
});
export type DiscoverySearchPage = z.infer<typeof discoverySearchPageSchema>;
