/** Request schemas of seller, endpoint and ledger routes. */
import { isAddress } from '@solana/kit';
import { z } from 'zod';
import { evmAddressSchema } from '../../../policy/policy-schema.js';
import { parsePathPattern } from '../../shared/path-pattern.js';
import { isStorableText, plainText, usdAmount } from '../http/schemas/common-schemas.js';
import { httpMethodSchema, isSolanaSignature, routePathSchema } from '../../shared/ledger-report-schema.js';
import { pageQuerySchema } from '../http/schemas/page-query-schema.js';
import { LATEST_CURSOR_TIME } from '../db/keyset-cursor.js';

const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'slug: lower-case letters, digits and dashes');
const capability = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._:\-/]{0,127}$/, 'capability tag: lower-case letters, digits and . _ : - /');
const httpUrl = z
  .string()
  .max(2048, { abort: true })
  .refine(isStorableText, 'must be well-formed Unicode without control characters')
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'http(s) URLs only');
const routePath = routePathSchema;
/**
 * A seller endpoint's path pattern: a route path whose segments each hold at most one `{parameter}` (with
 * optional literal text around it), bounded in length, segments and parameters; matched without a regex
 * (src/shared/path-pattern.ts).
 */
const pathPattern = routePath.superRefine((value, ctx) => {
  const parsed = parsePathPattern(value);
  if (!parsed.ok) ctx.addIssue({ code: 'custom', message: `path pattern: ${parsed.problem}` });
});
const method = httpMethodSchema;
/** USD price; "0" allowed here (free route). */
const price = z.union([usdAmount, z.literal('0')]);

/**
 * A record that refuses a `__proto__` key instead of silently dropping it (zod's record does the latter, so
 * `{"__proto__": …}` would otherwise be stored as `{}`).
 */
function strictRecord<K extends z.ZodType<string>, V extends z.ZodType>(key: K, value: V) {
  return z.preprocess(
    (raw) =>
      raw !== null && typeof raw === 'object' && Object.prototype.hasOwnProperty.call(raw, '__proto__')
        ? Symbol('refused')
        : raw,
    z.record(key, value),
  );
}

export const sellerIdSchema = z.string().regex(/^sel_[0-9a-f]{24}$/, 'expected a seller id (sel_…)');
export const endpointIdSchema = z.string().regex(/^ep_[0-9a-f]{24}$/, 'expected an endpoint id (ep_…)');

export const createSellerBodySchema = z
  .object({
    name: plainText(128),
    slug: slug.optional(),
    openapi_url: httpUrl.optional(),
    capabilities: z.array(capability).max(64).optional(),
    protocol: z.enum(['x402', 'mpp']).optional(),
    payout_mode: z.enum(['direct', 'platform_mor']).optional(),
    legal_entity: plainText(256).optional(),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/, 'ISO 3166-1 alpha-2 country code')
      .optional(),
    origin: httpUrl.optional(),
  })
  .strict();

/**
 * An endpoint's own route prices: at most MAX_ROUTE_PRICES paths. The gate's catalogue carries every endpoint's
 * (the gate prices with them), so their size is each gate's memory and each catalogue read's answer.
 */
export const MAX_ROUTE_PRICES = 64;
const routePrices = strictRecord(routePath, z.union([price, z.literal('')])).refine(
  (r) => Object.keys(r).length <= MAX_ROUTE_PRICES,
  `at most ${MAX_ROUTE_PRICES} route prices an endpoint`,
);

export const createEndpointBodySchema = z
  .object({
    slug: slug.optional(),
    path: routePath,
    method: method.optional(),
    price,
    route_prices: routePrices.optional(),
    path_pattern: pathPattern.optional(),
    capabilities: z.array(capability).max(64).optional(),
  })
  .strict();

export const updateEndpointBodySchema = z
  .object({
    path: routePath.optional(),
    method: method.optional(),
    price: price.optional(),
    route_prices: routePrices.optional(),
    path_pattern: pathPattern.nullable().optional(),
    capabilities: z.array(capability).max(64).optional(),
  })
  .strict();

/**
 * An ISO 8601 time with an offset, as a Date: from 1970 to the end of 9999 once the offset is applied (the
 * bounds of a page cursor's time, ../db/keyset-cursor.ts), so no year PostgreSQL refuses reaches a query.
 */
const isoDate = z
  .string()
  .datetime({ offset: true })
  .transform((v) => new Date(v))
  .refine((d) => d.getTime() >= 0 && d.getTime() <= LATEST_CURSOR_TIME, {
    message: 'must be a time from 1970 to the end of 9999 (UTC)',
  });
export const ledgerQuerySchema = pageQuerySchema
  .extend({
    seller_id: sellerIdSchema.optional(),
    from: isoDate.optional(),
    to: isoDate.optional(),
    endpoint_id: endpointIdSchema.optional(),
    /** Rows of one verification status only (GET /v1/ledger). */
    status: z.enum(['pending', 'verified', 'rejected']).optional(),
    format: z.enum(['csv']).optional(),
  })
  .strict();

/**
 * A pay-to address the seller receives payments at, with its signature of the claim message
 * (`Treasury: payments to <address> are revenue of seller <seller_id>.`, an EVM address lower-case, a Solana
 * one as given): an EVM address with its EIP-191 signature (0x + 65 bytes hex), or a Solana address (base58,
 * 32 bytes) with its Ed25519 signature (base58, 64 bytes).
 */
export const payToBodySchema = z.union([
  z
    .object({
      address: evmAddressSchema,
      signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, 'expected a 65-byte hex signature'),
    })
    .strict(),
  z
    .object({
      address: z.string().max(44).refine(isAddress, 'expected a base58 Solana address'),
      signature: z.string().max(88).refine(isSolanaSignature, 'expected a base58 Ed25519 signature (64 bytes)'),
    })
    .strict(),
]);

export const updateSellerBodySchema = z
  .object({
    name: plainText(128).optional(),
    origin: httpUrl.optional(),
    openapi_url: httpUrl.optional(),
    capabilities: z.array(capability).max(64).optional(),
    payout_mode: z.enum(['direct', 'platform_mor']).optional(),
  })
  .strict();

export const bankingBodySchema = z
  .object({ legal_entity: plainText(256), country: z.string().regex(/^[A-Z]{2}$/, 'ISO 3166-1 alpha-2 country code') })
  .strict();

/** A CAIP-2 EVM network a paywall takes payments on. */
const paywallNetwork = z
  .string()
  .regex(/^eip155:[1-9][0-9]{0,15}$/)
  .optional();

/** POST /v1/auth/verify: the network the paywall takes payments on (where its seller's buyers pay there). */
export const authVerifyBodySchema = z.object({ network: paywallNetwork }).strict();

/** GET /v1/gate/catalogue: the network the gate takes payments on (default: the API's default chain's). */
export const catalogueQuerySchema = z.object({ network: paywallNetwork }).strict();
