/**
 * What the identity routes answer: a sign-in nonce (POST /v1/identity/nonce), a session grant (POST
 * /v1/identity/init after a SIWE / SIWS signature, POST /v1/identity/exchange-pat for an agent PAT), and GET
 * /v1/auth/whoami (which kind of bearer called, its scope and, for a session, what it was made from).
 * Defined once here: the API is typed with the derived types and the `xx` CLI parses the replies with the
 * schemas.
 *
 * Defends: the server and its clients drifting apart silently. Does not defend: a reply of the right shape
 * with wrong content. Keys are listed in the order the API writes them.
 */
import { z } from 'zod';
import { timestampField } from './response-fields.js';
import { policyStateSchema } from './wallet-responses.js';

/** POST /v1/identity/nonce (201): the nonce a sign-in message must carry, single use. */
export const identityNonceSchema = z.object({ nonce: z.string().min(1), expires_at: timestampField });
export type IdentityNonce = z.infer<typeof identityNonceSchema>;

/** A session (`as_…`) and what it acts for; `created`: the sign-in made the account (and its first agent). */
export const sessionGrantSchema = z.object({
  session: z.string().startsWith('as_'),
  expires_at: timestampField,
  account_id: z.string(),
  agent_id: z.string().regex(/^agt_[0-9a-f]{24}$/, 'expected an agent id (agt_…)'),
  created: z.boolean(),
});
export type SessionGrant = z.infer<typeof sessionGrantSchema>;

/** POST /v1/auth/logout: the caller's session, ended. */
export const loggedOutSchema = z.object({ session_id: z.string(), revoked_at: timestampField });
export type LoggedOut = z.infer<typeof loggedOutSchema>;

/** POST /v1/auth/sessions/revoke-all: how many live sessions of the account were ended. */
export const sessionsRevokedSchema = z.object({ account_id: z.string(), revoked: z.number().int().nonnegative() });
export type SessionsRevoked = z.infer<typeof sessionsRevokedSchema>;

export const whoamiOperatorSchema = z.object({
  auth_type: z.literal('operator'),
  scope_type: z.literal('operator'),
  scope_id: z.null(),
});

export const whoamiTokenSchema = z.object({
  auth_type: z.enum(['pat', 'session', 'treasury_api_key']),
  scope_type: z.enum(['treasury', 'agent', 'service', 'account', 'gate']),
  scope_id: z.string(),
  token_id: z.string(),
  /** PATs: the PAT also carries the gate scope (docs/gate.md). */
  gate: z.boolean().optional(),
  /** Sessions only: a sign-in (the owner) or an exchanged agent PAT (acts as that agent). */
  session_origin: z.enum(['sign_in', 'pat_exchange']).nullable().optional(),
  account_id: z.string().nullable().optional(),
  agent_id: z.string().nullable().optional(),
  parent_token_id: z.string().nullable().optional(),
  /**
   * Bearers with wallets (Treasury, agent, owner session): `owner_signed` when every active wallet they reach
   * holds an owner-signed policy (docs/adr/0012-owner-signed-policies.md), else `ceilings_only`.
   */
  policy_state: policyStateSchema.optional(),
});

export const whoamiSchema = z.union([whoamiOperatorSchema, whoamiTokenSchema]);
export type Whoami = z.infer<typeof whoamiSchema>;
