/**
 * The catalogue entries of the Treasury account routes (./treasury-routes.ts): the accounts the operator
 * mints, their Treasury PATs, the retirement of their legacy api key and the operator's revocation of every
 * credential of an account; src/api/api-catalog.ts
 * puts every family together.
 *
 * Defends: a client generated from the document meeting these routes undescribed. Does not defend: who may
 * call them (./treasury-routes.ts).
 */
import type { CatalogEntry } from '../http/openapi/catalog-entry.js';
import {
  apiKeyRevokedSchema,
  credentialsRevokedSchema,
  issuedTreasuryPatSchema,
  mintedAccountSchema,
} from '../../shared/api-responses/account-responses.js';
import { issuePatBodySchema, mintTreasuryBodySchema } from './treasury-schemas.js';

export const TREASURIES_CATALOG: CatalogEntry[] = [
  {
    method: 'POST',
    path: '/v1/treasury',
    operationId: 'mintTreasury',
    summary: 'Mint a Treasury account (api_key shown once)',
    auth: 'operator',
    body: mintTreasuryBodySchema,
    replies: { 201: mintedAccountSchema },
    errors: ['admin_token_not_configured'],
  },
  {
    method: 'POST',
    path: '/v1/treasuries/{id}/pats',
    operationId: 'issueTreasuryPat',
    summary: "Issue a Treasury-scoped PAT (the operator or the account's legacy api key; a PAT gets 403)",
    auth: 'treasury_or_operator',
    body: issuePatBodySchema,
    replies: { 201: issuedTreasuryPatSchema },
    errors: ['pat_limit_reached'],
  },
  {
    method: 'POST',
    path: '/v1/treasuries/{id}/api-key/revoke',
    operationId: 'revokeTreasuryApiKey',
    summary: "Revoke the account's legacy xx_treasury_sk_ api key (idempotent)",
    auth: 'treasury_or_operator',
    replies: { 200: apiKeyRevokedSchema },
    errors: ['api_key_not_found'],
  },
  {
    method: 'POST',
    path: '/v1/treasuries/{id}/credentials/revoke',
    operationId: 'revokeTreasuryCredentials',
    summary:
      "Revoke every credential of the account: api key, Treasury PATs (a successor too), its agent's PATs (operator; idempotent)",
    auth: 'operator',
    replies: { 200: credentialsRevokedSchema },
    errors: ['admin_token_not_configured'],
  },
];
