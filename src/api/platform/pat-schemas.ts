/** Request schemas of the PAT routes (./pat-routes.ts; a seller's service PATs, src/api/sellers/seller-routes.ts). */
import { z } from 'zod';
import { patLifetimeSeconds, plainText, usdAmount } from '../http/schemas/common-schemas.js';

export const createPatBodySchema = z
  .object({
    scope_type: z.enum(['agent', 'treasury', 'service', 'gate']),
    scope_id: z
      .string()
      .regex(/^[a-z]{3,4}_[0-9a-f]{24}$/, 'expected an id such as agt_… or acct_…')
      .optional(),
    /** Also carry the gate scope: with scope_type "treasury", one PAT for a gate that also pays (docs/gate.md). */
    gate: z.boolean().optional(),
    label: plainText(128).optional(),
    daily_cap_usd: usdAmount.optional(),
    single_use: z.boolean().optional(),
    expires_in_seconds: patLifetimeSeconds.optional(),
    /**
     * Mint the PAT within this PAT of the account, as its child, bounded by it as
     * src/api/auth/credential-lineage.ts decides (docs/security-model.md, "Credential lineage").
     * `xx dashboard`'s handoff PAT.
     */
    parent_pat_id: z
      .string()
      .regex(/^pat_[0-9a-f]{24}$/, 'expected a PAT id (pat_…)')
      .optional(),
    /**
     * Mint the PAT within the calling sign-in session, as its child: it ends when the session ends (sign-out,
     * expiry, "end every session") and never outlives it. The dashboard's PATs. Not with `parent_pat_id`.
     */
    within_session: z.boolean().optional(),
  })
  .strict()
  .refine((b) => !(b.within_session === true && b.parent_pat_id !== undefined), {
    message: 'within_session and parent_pat_id name two parents; give one',
    path: ['within_session'],
  });

export const patchPatBodySchema = z.object({ daily_cap_usd: usdAmount.nullable() }).strict();

export const patIdSchema = z.string().regex(/^pat_[0-9a-f]{24}$/, 'expected a PAT id (pat_…)');
