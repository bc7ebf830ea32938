/**
 * The catalogue entries of the identity routes (sign-in, sessions, whoami); src/api/api-catalog.ts
 * puts every family together (the account's PATs: src/api/platform/pat-catalog.ts; a service PAT's check:
 * src/api/sellers/seller-catalog.ts).
 *
 * Defends: a client generated from the document meeting these routes, replies or errors undescribed. Does
 * not defend: the sign-in itself (src/api/identity/).
 */
import type { CatalogEntry } from '../http/openapi/catalog-entry.js';
import {
  identityNonceSchema,
  loggedOutSchema,
  sessionGrantSchema,
  sessionsRevokedSchema,
  whoamiSchema,
} from '../../shared/api-responses/identity-responses.js';
import { initBodySchema } from './sign-in-body.js';

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
      // A first sign-in makes its default agent's account key: a signer call of no tenant yet.
      'signer_overloaded',
      'signer_unavailable',
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
];
