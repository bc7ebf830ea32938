/**
 * What GET /v1/auth/whoami answers: which kind of bearer called, its scope and, for a session, what it was
 * made from (a sign-in, or an agent PAT exchanged for it). Defined once here: the API's route is typed with
 * the derived type and the `xx` CLI parses the reply with the schema.
 *
 * Defends: the server and its clients drifting apart silently. Does not defend: a reply of the right shape
 * with wrong content. Keys are listed in the order the API writes them.
 */
import { z } from 'zod';

export const whoamiOperatorSchema = z.object({ auth_type: z.literal('operator'), scope_type: z.literal('operator'), scope_id: z.null() });

export const whoamiTokenSchema = z.object({
  auth_type: z.enum(['pat', 'session', 'treasury_api_key']),
  scope_type: z.enum(['treasury', 'agent', 'service', 'account']),
  scope_id: z.string(),
  token_id: z.string(),
  /** Sessions only: a sign-in (the owner) or an exchanged agent PAT (acts as that agent). */
  session_origin: z.enum(['sign_in', 'pat_exchange']).nullable().optional(),
  account_id: z.string().nullable().optional(),
  agent_id: z.string().nullable().optional(),
  parent_token_id: z.string().nullable().optional(),
});

export const whoamiSchema = z.union([whoamiOperatorSchema, whoamiTokenSchema]);
export type Whoami = z.infer<typeof whoamiSchema>;
