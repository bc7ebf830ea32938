/**
 * What the API answers on the Treasury account routes: the minted account with its legacy api key (POST
 * /v1/treasury, shown once), a Treasury PAT issued to the account (POST /v1/treasuries/{id}/pats, shown
 * once), the api key's revocation (POST /v1/treasuries/{id}/api-key/revoke) and the operator's revocation of
 * every credential of an account (POST /v1/treasuries/{id}/credentials/revoke). Defined once here: the API's
 * account service is typed with the derived types and the OpenAPI document is derived from the schemas.
 *
 * Defends: the server and its clients drifting apart silently. Does not defend: a reply of the right shape
 * with wrong content. Keys are listed in the order the API writes them.
 */
import { z } from 'zod';
import { patIdField, timestampField } from './response-fields.js';

/** POST /v1/treasury (201): the account and its `xx_treasury_sk_` api key, shown once. */
export const mintedAccountSchema = z.object({
  id: z.string(),
  owner_type: z.string(),
  owner_id: z.string(),
  status: z.string(),
  created_at: timestampField,
  api_key: z.string().startsWith('xx_treasury_sk_'),
});
export type MintedAccount = z.infer<typeof mintedAccountSchema>;

/** POST /v1/treasuries/{id}/pats (201): a Treasury-scoped PAT, its secret shown once. */
export const issuedTreasuryPatSchema = z.object({
  id: patIdField,
  token: z.string().startsWith('xx_pat_'),
  scope_type: z.literal('treasury'),
  scope_id: z.string(),
  label: z.string().nullable(),
  created_at: timestampField,
  expires_at: timestampField.nullable(),
});
export type IssuedTreasuryPat = z.infer<typeof issuedTreasuryPatSchema>;

/** POST /v1/treasuries/{id}/api-key/revoke: when the legacy api key stopped working. */
export const apiKeyRevokedSchema = z.object({ treasury_id: z.string(), revoked_at: timestampField });
export type ApiKeyRevoked = z.infer<typeof apiKeyRevokedSchema>;

/**
 * POST /v1/treasuries/{id}/credentials/revoke (operator): every credential of the account ended as of
 * `revoked_at`; `revoked` counts the live ones found (0 when nothing was live), not those made within them.
 */
export const credentialsRevokedSchema = z.object({
  treasury_id: z.string(),
  revoked_at: timestampField,
  revoked: z.number().int().nonnegative(),
});
export type CredentialsRevoked = z.infer<typeof credentialsRevokedSchema>;
