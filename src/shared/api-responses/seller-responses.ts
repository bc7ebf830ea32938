/**
 * What the API answers about a seller (a "service") and its priced endpoints: the seller and endpoint
 * views, banking, origin verification, the OpenAPI refresh report, the paged lists. Defined once here: the
 * API's view functions are typed with the derived types (a field added, dropped or retyped on one side fails
 * to compile), and the `xx` CLI parses the replies with the schemas.
 *
 * Defends: the server and its clients drifting apart silently; a client acting on a reply of another shape.
 * Does not defend: a reply of the right shape with wrong content. Keys are listed in the order the API writes
 * them, so that `--json` output follows the API's.
 */
import { z } from 'zod';
import { endpointIdField, pageOf, patIdField, sellerIdField, timestampField, usdField } from './response-fields.js';

export const payoutModeSchema = z.enum(['direct', 'platform_mor']);
export const sellerProtocolSchema = z.enum(['x402', 'mpp']);
export const bankingStateSchema = z.enum(['none', 'declared', 'verified']);
export const sellerStatusSchema = z.enum(['active', 'suspended']);

/** A seller as GET /v1/sellers/{id} (and PATCH, suspend, resume) answers it. */
export const sellerViewSchema = z.object({
  seller_id: sellerIdField,
  name: z.string(),
  slug: z.string(),
  openapi_url: z.string().nullable(),
  capabilities: z.array(z.string()),
  protocol: sellerProtocolSchema,
  payout_mode: payoutModeSchema,
  legal_entity: z.string().nullable(),
  country: z.string().nullable(),
  banking_state: bankingStateSchema,
  status: sellerStatusSchema,
  origin: z.string().nullable(),
  origin_verified: z.boolean(),
  verified_at: timestampField.nullable(),
  created_at: timestampField,
  updated_at: timestampField,
});
export type SellerView = z.infer<typeof sellerViewSchema>;

/** A page of GET /v1/sellers (the account's sellers, oldest first). */
export const sellerPageSchema = pageOf('sellers', sellerViewSchema);
export type SellerPage = z.infer<typeof sellerPageSchema>;

/** A priced endpoint as the endpoint routes answer it; `price` in USD, `route_prices` exact path → USD ('' free). */
export const endpointViewSchema = z.object({
  endpoint_id: endpointIdField,
  seller_id: sellerIdField,
  slug: z.string(),
  method: z.string(),
  path: z.string(),
  path_pattern: z.string().nullable(),
  price: usdField,
  route_prices: z.record(z.string(), z.string()),
  /** False until the seller prices an operation ingested without `x-price-usd` (the gate does not serve it). */
  priced: z.boolean(),
  capabilities: z.array(z.string()),
  created_at: timestampField,
  updated_at: timestampField,
});
export type EndpointView = z.infer<typeof endpointViewSchema>;

/** A page of GET /v1/sellers/{id}/endpoints (oldest first). */
export const endpointPageSchema = pageOf('endpoints', endpointViewSchema);
export type EndpointPage = z.infer<typeof endpointPageSchema>;

/** What POST /v1/sellers/{id}/refresh answers: the endpoint slugs the OpenAPI document added, changed, removed or could not remove. */
export const refreshReportSchema = z.object({
  seller_id: sellerIdField,
  openapi_url: z.string(),
  added: z.array(z.string()),
  changed: z.array(z.string()),
  removed: z.array(z.string()),
  kept_for_ledger: z.array(z.string()),
  unchanged: z.number().int().nonnegative(),
});
export type RefreshReport = z.infer<typeof refreshReportSchema>;

/** The ingest at registration: the refresh report, or the error code of a failed ingest (`xx refresh` retries). */
export const ingestOutcomeSchema = z.union([refreshReportSchema, z.object({ error_code: z.string() })]);
export type IngestOutcome = z.infer<typeof ingestOutcomeSchema>;

/** POST /v1/sellers (201): the seller, its first service PAT (shown once) and, with an openapi_url, the ingest. */
export const createdSellerSchema = sellerViewSchema.extend({
  pat: z.string(),
  pat_id: patIdField,
  ingest: ingestOutcomeSchema.optional(),
});
export type CreatedSeller = z.infer<typeof createdSellerSchema>;

/** GET and PUT /v1/sellers/{id}/banking, POST …/banking/verify. */
export const bankingViewSchema = z.object({
  seller_id: sellerIdField,
  legal_entity: z.string().nullable(),
  country: z.string().nullable(),
  state: bankingStateSchema,
});
export type BankingView = z.infer<typeof bankingViewSchema>;

/** GET /v1/sellers/{id}/verify: the file and token the origin must serve. */
export const originVerificationSchema = z.object({
  seller_id: sellerIdField,
  origin: z.string().nullable(),
  path: z.literal('/.well-known/xx-verification.txt'),
  token: z.string(),
  verified_at: timestampField.nullable(),
});
export type OriginVerification = z.infer<typeof originVerificationSchema>;

/** POST /v1/sellers/{id}/verify: the seller once its origin served the token. */
export const verifiedSellerSchema = sellerViewSchema.extend({ verified: z.literal(true) });
export type VerifiedSeller = z.infer<typeof verifiedSellerSchema>;

/** POST /v1/auth/verify (service PAT): what the seller middleware builds its route table from. */
export const sellerAuthVerifySchema = z.object({
  seller_id: sellerIdField,
  slug: z.string(),
  protocol: sellerProtocolSchema,
  payout_mode: payoutModeSchema,
  status: sellerStatusSchema,
  endpoints: z.array(endpointViewSchema),
  /**
   * Where buyers pay on the network the middleware named: the seller's collection wallet when the platform is
   * its merchant of record (`platform_mor`), null when buyers pay the seller's own pay-to (or the platform does
   * not collect on that network).
   */
  collect_to: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .nullable(),
});
export type SellerAuthVerify = z.infer<typeof sellerAuthVerifySchema>;
