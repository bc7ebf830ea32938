/**
 * The signer protocol's error replies (./signer-protocol.ts is the contract): the stable codes, the signer's own
 * limit names, and the details a refusal carries as fields.
 * Defends: refusals whose reason must be parsed out of text — every rule, limit, headroom and violated policy rule
 * travels as a bounded field; the message is for humans only.
 */
import { z } from 'zod';
import { MAX_POLICY_VERSION } from '../../policy/signed-policy.js';
import { policyViolationDetailSchema } from './owner-policy-protocol.js';
import { uint256StringSchema } from './wire-primitives.js';

export const SIGNER_ERROR_CODES = [
  'frame_too_large',
  'malformed_frame',
  'invalid_request',
  'unsupported_version',
  'unknown_method',
  'invariant_violation',
  'key_not_found',
  'key_destroyed',
  'address_mismatch',
  'hsm_unavailable',
  /** The key backend (AWS KMS) cannot be reached, is throttling past the deadline, or stalled: retry shortly. */
  'backend_unavailable',
  'hsm_error',
  /** The HSM lacks a mechanism, key type or curve the request needs (docs/deploy-hsm.md): permanent, do not retry. */
  'hsm_unsupported',
  'limit_exceeded',
  /** The wallet's owner-signed policy refuses this payment (details: the violated rules). */
  'policy_denied',
  /** A policy document not signed by the wallet's authority, or an authority proof that does not verify. */
  'policy_signature_invalid',
  /** A policy document whose version is not the held one + 1 (details: current_version; a skip: rule version_gap). */
  'policy_version_stale',
  /**
   * The wallet's owner-signed policy does not allow its key to be destroyed (details: `rule: owner_policy` and the
   * policy's `current_version`); the owner signs a policy with `allow_key_destruction: true` first.
   */
  'key_destruction_not_allowed',
  /** The signer keeps no policy store (TREASURY_SIGNER_DATABASE_URL unset), or it cannot be reached: retry shortly. */
  'policy_store_unavailable',
  'busy',
  'internal_error',
] as const;
export const signerErrorCodeSchema = z.enum(SIGNER_ERROR_CODES);

/**
 * The signer's own amount and rate limits (signer/limits/, configured on the signer only). `per_signature`
 * is the `value_max` invariant (an `invariant_violation`); the others are rolling windows per wallet
 * address (`limit_exceeded`): amounts in raw token units (6 decimals), signatures as a count; policy receipts
 * (`attest_wallet_policy`) count in the `wallet_receipts_*` windows only, payments and permits never do.
 */
export const SIGNER_LIMIT_NAMES = [
  'per_signature',
  'wallet_amount_hour',
  'wallet_amount_day',
  'wallet_signatures_minute',
  'wallet_signatures_hour',
  'wallet_receipts_minute',
  'wallet_receipts_hour',
] as const;
export const signerLimitNameSchema = z.enum(SIGNER_LIMIT_NAMES);

/**
 * What a refusal is about, as fields (never to be parsed out of `message`): the invariant `rule` that
 * failed; for a limit, which one, its maximum, what is left of it (`headroom`, same unit), its rolling
 * window and when a request of the same size could pass again (`retry_after_seconds`).
 */
export const signerErrorDetailsSchema = z
  .object({
    rule: z
      .string()
      .regex(/^[a-z0-9_]{1,32}$/)
      .optional(),
    limit: signerLimitNameSchema.optional(),
    max: uint256StringSchema.optional(),
    headroom: uint256StringSchema.optional(),
    window_seconds: z
      .number()
      .int()
      .positive()
      .max(31 * 86_400)
      .optional(),
    retry_after_seconds: z
      .number()
      .int()
      .nonnegative()
      .max(31 * 86_400)
      .optional(),
    /** A `policy_denied`: every rule of the signed policy the payment breaks. */
    violations: z.array(policyViolationDetailSchema).min(1).max(16).optional(),
    /** A `policy_denied` or `policy_version_stale`: the version of the signed policy the signer holds. */
    current_version: z.number().int().min(1).max(MAX_POLICY_VERSION).optional(),
  })
  .strict();

export const signerErrorReplySchema = z
  .object({
    v: z.literal(1),
    id: z.string().max(64).nullable(),
    ok: z.literal(false),
    error: z
      .object({
        code: signerErrorCodeSchema,
        message: z.string().max(1024),
        details: signerErrorDetailsSchema.optional(),
      })
      .strict(),
  })
  .strict();
export const signerOkReplySchema = z
  .object({ v: z.literal(1), id: z.string().max(64), ok: z.literal(true), result: z.unknown() })
  .strict();
export const signerReplySchema = z.union([signerOkReplySchema, signerErrorReplySchema]);

export type SignerErrorCode = z.infer<typeof signerErrorCodeSchema>;
export type SignerErrorDetails = z.infer<typeof signerErrorDetailsSchema>;
export type SignerLimitName = z.infer<typeof signerLimitNameSchema>;
export type SignerReply = z.infer<typeof signerReplySchema>;
