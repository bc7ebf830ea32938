/**
 * The catalogue entries of the identity routes (sign-in, sessions, whoami, a service PAT's check) and of the
 * account's PATs; ./api-catalog.ts puts every family together.
 *
 * Defends: a client generated from the document meeting these routes, replies or errors undescribed. Does
 * not defend: the sign-in itself (src/api/identity/).
 */
import type { CatalogEntry } from './catalog-entry.js';
import {
  identityNonceSchema,
  loggedOutSchema,
  sessionGrantSchema,
  sessionsRevokedSchema,
  whoamiSchema,
} from '../../../shared/api-responses/identity-responses.js';
import { createdPatSchema, patPageSchema, patViewSchema } from '../../../shared/api-responses/pat-responses.js';
import { sellerAuthVerifySchema } from '../../../shared/api-responses/seller-responses.js';
import { createPatBodySchema, initBodySchema, patchPatBodySchema } from '../schemas/identity-schemas.js';
import { pageQuerySchema } from '../schemas/page-query-schema.js';
import { authVerifyBodySchema } from '../../sellers/seller-schemas.js';

export const IDENTITY_CATALOG: CatalogEntry[] = [
  {
    method: 'POST',
    path: '/v1/identity/nonce',
    operationId: 'issueSignInNonce',
    summary: 'Issue a sign-in nonce',
    auth: 'none',
    replies: { 201: identityNonceSchema },
  },
  {
    method: 'POST',
    path: '/v1/identity/init',
    operationId: 'signIn',
    summary: "Sign in with SIWE or SIWS (SIWE may link the same seed's Solana key); returns an as_ session",
    auth: 'none',
    body: initBodySchema,
    replies: { 200: sessionGrantSchema, 201: sessionGrantSchema },
    errors: [
      'sign_in_chain_not_supported',
      'sign_in_message_invalid',
      'sign_in_domain_mismatch',
      'sign_in_nonce_invalid',
      'sign_in_expired',
      'sign_in_signature_invalid',
      'identity_already_linked',
    ],
  },
  {
    method: 'POST',
    path: '/v1/identity/exchange-pat',
    operationId: 'exchangePatForSession',
    summary: 'Exchange an agent PAT for a session',
    auth: 'agent',
    replies: { 200: sessionGrantSchema },
  },
  {
    method: 'GET',
    path: '/v1/auth/whoami',
    operationId: 'whoami',
    summary: 'Inspect the bearer (a session says session_origin: sign_in or pat_exchange, and its agent_id)',
    auth: 'any',
    replies: { 200: whoamiSchema },
  },
  {
    method: 'POST',
    path: '/v1/auth/logout',
    operationId: 'logout',
    summary: 'End the calling session',
    auth: 'session',
    replies: { 200: loggedOutSchema },
  },
  {
    method: 'POST',
    path: '/v1/auth/sessions/revoke-all',
    operationId: 'revokeAllSessions',
    summary: 'End every session of the account (PATs stay)',
    auth: 'owner_session',
    replies: { 200: sessionsRevokedSchema },
  },
  {
    method: 'POST',
    path: '/v1/auth/verify',
    operationId: 'verifyServicePat',
    summary: "Validate a service PAT; list the seller endpoints and where its buyers pay on the paywall's network",
    auth: 'service',
    body: authVerifyBodySchema,
    bodyOptional: true,
    replies: { 200: sellerAuthVerifySchema },
    errors: ['seller_suspended'],
  },
];

export const PAT_CATALOG: CatalogEntry[] = [
  {
    method: 'POST',
    path: '/v1/pats',
    operationId: 'createPat',
    summary: 'Create a PAT (with parent_pat_id: within that PAT, bounded by it)',
    auth: 'owner_session',
    body: createPatBodySchema,
    replies: { 201: createdPatSchema },
    errors: ['scope_not_found', 'pat_not_found', 'lineage_exceeds_parent'],
  },
  {
    method: 'GET',
    path: '/v1/pats',
    operationId: 'listPats',
    summary: 'List PATs (paged)',
    auth: 'owner_session',
    query: pageQuerySchema,
    replies: { 200: patPageSchema },
  },
  {
    method: 'DELETE',
    path: '/v1/pats/{id}',
    operationId: 'revokePat',
    summary: 'Revoke a PAT',
    auth: 'owner_session',
    replies: { 200: patViewSchema },
  },
  {
    method: 'PATCH',
    path: '/v1/pats/{id}',
    operationId: 'updatePatDailyCap',
    summary: 'Change a buyer PAT daily cap',
    auth: 'owner_session',
    body: patchPatBodySchema,
    replies: { 200: patViewSchema },
    errors: ['lineage_exceeds_parent'],
  },
];
