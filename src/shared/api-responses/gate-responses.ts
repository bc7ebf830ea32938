/**
 * What the API answers the gate (docs/gate.md): `GET /v1/gate/catalogue`, the account's managed-proxy (`mpp`)
 * sellers with what the gate needs to sell their endpoints — slug (the path prefix), origin (where paid
 * requests go) and whether it is verified, pay_to (where buyers pay: the seller's oldest proven pay-to address,
 * or for a `platform_mor` seller its collection wallet on the network the gate asked for), solana_pay_to (its
 * oldest proven Solana pay-to address), status, and each
 * endpoint's method, path or path pattern, prices and whether it is priced, and its declarations (capability
 * tags, input and output schemas) within one byte budget per catalogue. Defined once here: the API's route is
 * typed with it and the gate parses the reply with it.
 *
 * Size: at most MAX_GATE_SELLERS sellers, MAX_GATE_ENDPOINTS endpoints and MAX_GATE_DECLARATION_BYTES of
 * declarations; every other field is bounded below, but an endpoint's `route_prices` only by what the
 * endpoint routes accept.
 *
 * Defends: the gate and the platform drifting apart silently; a gate acting on a catalogue of another shape
 * (the gate keeps its last good catalogue instead). Does not defend: a catalogue of the right shape with wrong
 * content (prices and pay-to are the seller's own settings).
 */
import { z } from 'zod';
import { endpointIdField, sellerIdField, usdField } from './response-fields.js';
import { sellerStatusSchema } from './seller-responses.js';

/** At most this many sellers (and endpoints in all) in one catalogue. */
export const MAX_GATE_SELLERS = 1000;
export const MAX_GATE_ENDPOINTS = 10_000;
/**
 * At most this many bytes of declarations (each endpoint's `capabilities` and `discovery` JSON text) in one
 * catalogue: the oldest endpoints carry theirs, every later one has neither (the gate then declares the seller's
 * name only). A quarter of what the gate reads at most (4 MiB, src/gate/catalogue-source.ts).
 */
export const MAX_GATE_DECLARATION_BYTES = 1024 * 1024;

export const gateEndpointSchema = z.object({
  endpoint_id: endpointIdField,
  slug: z.string().max(128),
  method: z.string().max(16),
  path: z.string().max(512),
  path_pattern: z.string().max(512).nullable(),
  price: usdField,
  route_prices: z.record(z.string().max(512), z.string().max(32)),
  /**
   * Whether the seller set a price (a "0" price then means free, by choice); false for an operation ingested
   * from an OpenAPI document without one, which the gate does not serve until it is priced.
   */
  priced: z.boolean(),
  /**
   * The endpoint's capability tags (its Bazaar `tags`). Absent from older platforms, and past the catalogue's
   * declaration budget (MAX_GATE_DECLARATION_BYTES).
   */
  capabilities: z.array(z.string().max(128)).max(64).optional(),
  /**
   * What the seller's OpenAPI operation declares (its Bazaar declaration: input and output JSON Schemas, each at
   * most 16 KiB of JSON as the OpenAPI refresh keeps them; older platforms sent its description too); null or
   * absent when none, and past the catalogue's declaration budget (MAX_GATE_DECLARATION_BYTES).
   */
  discovery: z
    .object({
      description: z.string().max(1024).optional(),
      input_schema: z.record(z.string().max(256), z.unknown()).optional(),
      output_schema: z.record(z.string().max(256), z.unknown()).optional(),
    })
    .nullable()
    .optional(),
});
export type GateEndpoint = z.infer<typeof gateEndpointSchema>;

export const gateSellerSchema = z.object({
  seller_id: sellerIdField,
  slug: z.string().max(128),
  /** The seller's name (its Bazaar `serviceName`, cut to 32 characters). Absent from older platforms. */
  name: z.string().max(256).optional(),
  status: sellerStatusSchema,
  /** The origin paid requests are proxied to (scheme, host, port), or null when the seller has not set one. */
  origin: z.string().max(2048).nullable(),
  /** Whether the seller proved it controls `origin` (/.well-known/xx-verification.txt); the gate sells no other. */
  origin_verified: z.boolean(),
  /**
   * Where buyers pay: a `platform_mor` seller's collection wallet on the catalogue's network (null when the
   * platform does not collect there), else the seller's oldest proven pay-to address (null when none yet).
   */
  pay_to: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .nullable(),
  /**
   * Where buyers pay on Solana: the seller's oldest proven Solana (base58) pay-to address; null for a
   * `platform_mor` seller (the platform collects on its EVM network only) or when none is proven. Absent from
   * older platforms.
   */
  solana_pay_to: z
    .string()
    .regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
    .nullable()
    .optional(),
  endpoints: z.array(gateEndpointSchema).max(MAX_GATE_ENDPOINTS),
});
export type GateSeller = z.infer<typeof gateSellerSchema>;

export const gateCatalogueSchema = z.object({
  account_id: z.string().max(64),
  sellers: z.array(gateSellerSchema).max(MAX_GATE_SELLERS),
});
export type GateCatalogue = z.infer<typeof gateCatalogueSchema>;
