/**
 * What the API answers about personal access tokens (/v1/pats and a seller's /v1/sellers/{id}/pats): the PAT
 * view (never the secret), the PAT once at creation, the paged list. Defined once here: the API's PAT service
 * is typed with the derived types and the `xx` CLI parses the replies with the schemas.
 *
 * Defends: the server and its clients drifting apart silently; a client acting on a reply of another shape.
 * Does not defend: a reply of the right shape with wrong content. Keys are listed in the order the API writes them.
 */
import { z } from 'zod';
import { pageOf, patIdField, timestampField, usdField } from './response-fields.js';

export const patScopeTypeSchema = z.enum(['agent', 'treasury', 'service', 'gate']);

/** A PAT as listed, revoked or updated: no secret. */
export const patViewSchema = z.object({
  id: patIdField,
  scope_type: patScopeTypeSchema,
  scope_id: z.string(),
  /** The PAT carries the gate scope (a `gate` PAT, or a Treasury PAT minted with `gate: true`). */
  gate: z.boolean(),
  label: z.string().nullable(),
  /** Buyer (agent) PATs: the daily spend cap in USD, or null for none. */
  daily_cap_usd: usdField.nullable(),
  single_use: z.boolean(),
  created_at: timestampField,
  expires_at: timestampField.nullable(),
  used_at: timestampField.nullable(),
  revoked_at: timestampField.nullable(),
  /** The credential it was minted within (a PAT or a Treasury api key), or null for a root of the account. */
  parent_token_id: z.string().nullable(),
  /** Who minted it: a session, a token or the operator (`admin`). */
  created_by: z.string(),
});
export type PatView = z.infer<typeof patViewSchema>;

/** POST /v1/pats and POST /v1/sellers/{id}/pats (201): the view and, once, the secret. */
export const createdPatSchema = patViewSchema.extend({ pat: z.string().startsWith('xx_pat_') });
export type CreatedPat = z.infer<typeof createdPatSchema>;

/** A page of GET /v1/pats or GET /v1/sellers/{id}/pats (oldest first). */
export const patPageSchema = pageOf('pats', patViewSchema);
export type PatPage = z.infer<typeof patPageSchema>;
