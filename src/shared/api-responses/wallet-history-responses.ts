/**
 * What the API answers about a wallet's history: its recent policy decisions (GET /v1/wallets/{id}/decisions)
 * and the tail of its audit chain with the chain's verification state (GET /v1/wallets/{id}/audit). Defined
 * once here: the routes are typed with the derived types and the dashboard reads them.
 *
 * Defends: the server and its clients drifting apart silently. Does not defend: a reply of the right shape
 * with wrong content. Keys are listed in the order the API writes them.
 */
import { z } from 'zod';
import { timestampField, usdField } from './response-fields.js';

export const walletDecisionSchema = z.object({
  id: z.string().regex(/^pd_[0-9a-f]{24}$/, 'expected a decision id (pd_…)'),
  outcome: z.enum(['allow', 'deny']),
  kind: z.enum(['pay', 'transfer']),
  amount_usd: usdField,
  to: z.string(),
  capability: z.string().nullable(),
  /** The rules that refused it (rule, message, limit, attempted…); empty when allowed. */
  violations: z.array(z.object({ rule: z.string(), message: z.string() }).loose()),
  /** A denial's headroom as it stood; empty for an allowed payment (its authorization records the payment). */
  headroom: z.record(z.string(), z.unknown()),
  /**
   * Who refused a denial: the API's policy check (`api`) or the signer's check of the owner-signed policy
   * (`signer`, docs/adr/0012-owner-signed-policies.md); null for an allowed payment, which passed every check the
   * wallet has.
   */
  decided_by: z.enum(['api', 'signer']).nullable(),
  /** The allowed payment's authorization (`au_…`); null for a denial. */
  authorization_id: z.string().nullable(),
  created_at: timestampField,
});
export type WalletDecision = z.infer<typeof walletDecisionSchema>;

/** GET /v1/wallets/{id}/decisions: newest first. */
export const walletDecisionsSchema = z.object({ wallet_id: z.string(), decisions: z.array(walletDecisionSchema) });
export type WalletDecisions = z.infer<typeof walletDecisionsSchema>;

export const auditEventViewSchema = z.object({
  seq: z.number().int().positive(),
  event_type: z.string(),
  actor: z.string(),
  created_at: timestampField,
  prev_hash: z.string(),
  hash: z.string(),
});
export type AuditEventView = z.infer<typeof auditEventViewSchema>;

/**
 * The chain recomputed from its first row: `verified` (every hash and link holds), `broken` (the first row
 * that does not, and why), or `not_checked` for a chain longer than the route recomputes (the operator's
 * `npm run audit:verify -- <wallet_id>` does), or one whose verification did not get its turn within the wait
 * (the process was busy verifying other chains: asking again verifies it).
 */
export const auditVerificationSchema = z.union([
  z.object({ state: z.literal('verified'), rows: z.number().int().nonnegative() }),
  z.object({
    state: z.literal('broken'),
    rows: z.number().int().nonnegative(),
    seq: z.number().int(),
    reason: z.string(),
  }),
  z.object({ state: z.literal('not_checked'), rows: z.number().int().nonnegative() }),
]);
export type AuditVerification = z.infer<typeof auditVerificationSchema>;

/** GET /v1/wallets/{id}/audit: the newest events, newest first, and the whole chain's verification. */
export const walletAuditSchema = z.object({
  wallet_id: z.string(),
  events: z.array(auditEventViewSchema),
  verification: auditVerificationSchema,
});
export type WalletAudit = z.infer<typeof walletAuditSchema>;
