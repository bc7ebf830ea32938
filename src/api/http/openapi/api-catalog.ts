/**
 * The catalogue of every route with its request schema — the single source of `GET /v1/openapi.json`
 * (./openapi-document.ts builds the document from it).
 * A test compares it with the routes the app actually serves, so the document stays complete.
 */
import { z } from 'zod';
import {
  evaluateBodySchema,
  payBodySchema,
  putPolicyBodySchema,
  settlementBodySchema,
  transferBodySchema,
} from '../../pay/pay-schemas.js';
import { createPatBodySchema, initBodySchema, patchPatBodySchema } from '../schemas/identity-schemas.js';
import {
  bankingBodySchema,
  createEndpointBodySchema,
  createSellerBodySchema,
  ledgerQuerySchema,
  payToBodySchema,
  updateEndpointBodySchema,
  updateSellerBodySchema,
} from '../schemas/seller-schemas.js';
import { ledgerBatchBodySchema, ledgerReportBodySchema } from '../../../shared/ledger-report-schema.js';
import { pageQuerySchema } from '../schemas/page-query-schema.js';
import { issuePatBodySchema, mintTreasuryBodySchema } from '../schemas/treasury-schemas.js';
import {
  createWalletBodySchema,
  historyQuerySchema,
  keyRetirementBodySchema,
  listWalletsQuerySchema,
} from '../schemas/wallet-schemas.js';

/**
 * Who may call a route. `session` is any account session, including one exchanged from an agent PAT;
 * `owner_session` is money control and takes only a session from a SIWE / SIWS sign-in (an exchanged one
 * gets 403 `fresh_sign_in_required`; src/api/auth/session-powers.ts). `treasury_or_agent` and
 * `session_or_agent` admit an agent PAT and the sessions exchanged from it, acting as that agent.
 */
type Auth =
  | 'none'
  | 'operator'
  | 'treasury'
  | 'treasury_or_agent'
  | 'session'
  | 'owner_session'
  | 'session_or_agent'
  | 'session_or_service'
  | 'service'
  | 'agent'
  | 'any';

export interface CatalogEntry {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  summary: string;
  auth: Auth;
  body?: z.ZodType;
  query?: z.ZodType;
}

export const API_CATALOG: CatalogEntry[] = [
  { method: 'GET', path: '/livez', summary: 'Liveness', auth: 'none' },
  { method: 'GET', path: '/health', summary: 'Liveness (alias)', auth: 'none' },
  { method: 'GET', path: '/readyz', summary: 'Readiness: database and signer', auth: 'none' },
  { method: 'GET', path: '/metrics', summary: 'Prometheus metrics', auth: 'none' },
  { method: 'GET', path: '/v1/openapi.json', summary: 'This document', auth: 'none' },
  {
    method: 'POST',
    path: '/v1/treasury',
    summary: 'Mint a Treasury account (api_key shown once)',
    auth: 'operator',
    body: mintTreasuryBodySchema,
  },
  {
    method: 'POST',
    path: '/v1/treasuries/{id}/pats',
    summary: 'Issue a Treasury-scoped PAT',
    auth: 'treasury',
    body: issuePatBodySchema,
  },
  {
    method: 'POST',
    path: '/v1/treasuries/{id}/api-key/revoke',
    summary: "Revoke the account's legacy xx_treasury_sk_ api key (idempotent)",
    auth: 'treasury',
  },
  {
    method: 'POST',
    path: '/v1/wallets',
    summary: 'Create a sub-wallet (key generated in the HSM)',
    auth: 'treasury',
    body: createWalletBodySchema,
  },
  {
    method: 'GET',
    path: '/v1/wallets',
    summary: 'List wallets',
    auth: 'treasury_or_agent',
    query: listWalletsQuerySchema,
  },
  { method: 'GET', path: '/v1/wallets/{id}', summary: 'Read a wallet (410 when revoked)', auth: 'treasury_or_agent' },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/balance',
    summary: 'USDC balance read on-chain (stale: true with the last figure while the RPC is down)',
    auth: 'treasury_or_agent',
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/rotate',
    summary: 'Rotate: same id, new key and address (refused while the old address holds USDC, unless abandon_balance)',
    auth: 'treasury',
    body: keyRetirementBodySchema,
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/revoke',
    summary: 'Revoke: every later call answers 410 (refused while the address holds USDC, unless abandon_balance)',
    auth: 'treasury',
    body: keyRetirementBodySchema,
  },
  { method: 'GET', path: '/v1/wallets/{id}/policy', summary: 'Read the policy', auth: 'treasury_or_agent' },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/decisions',
    summary: 'Recent policy decisions (newest first): pd_ ids, outcome, violated rules, headroom',
    auth: 'treasury_or_agent',
    query: historyQuerySchema,
  },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/audit',
    summary: "Recent audit events (newest first) and the wallet's hash-chain verification state",
    auth: 'treasury_or_agent',
    query: historyQuerySchema,
  },
  {
    method: 'PUT',
    path: '/v1/wallets/{id}/policy',
    summary: 'Replace the policy',
    auth: 'treasury',
    body: putPolicyBodySchema,
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/policy/evaluate',
    summary: 'Dry run of a payment against the policy',
    auth: 'treasury_or_agent',
    body: evaluateBodySchema,
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/pay',
    summary: 'Sign an x402 payment (Idempotency-Key supported)',
    auth: 'treasury_or_agent',
    body: payBodySchema,
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/transfer',
    summary: 'Sign a transfer (Idempotency-Key supported)',
    auth: 'treasury_or_agent',
    body: transferBodySchema,
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/authorizations/{authorization_id}/settlement',
    summary: 'Record an upto settlement, verified on chain; gives back the unsettled part of the signed maximum',
    auth: 'treasury_or_agent',
    body: settlementBodySchema,
  },
  { method: 'POST', path: '/v1/identity/nonce', summary: 'Issue a sign-in nonce', auth: 'none' },
  {
    method: 'POST',
    path: '/v1/identity/init',
    summary: 'Sign in with SIWE or SIWS; returns an as_ session',
    auth: 'none',
    body: initBodySchema,
  },
  { method: 'POST', path: '/v1/identity/exchange-pat', summary: 'Exchange an agent PAT for a session', auth: 'agent' },
  {
    method: 'GET',
    path: '/v1/auth/whoami',
    summary: 'Inspect the bearer (a session says session_origin: sign_in or pat_exchange, and its agent_id)',
    auth: 'any',
  },
  { method: 'POST', path: '/v1/auth/logout', summary: 'End the calling session', auth: 'session' },
  {
    method: 'POST',
    path: '/v1/auth/sessions/revoke-all',
    summary: 'End every session of the account (PATs stay)',
    auth: 'owner_session',
  },
  {
    method: 'POST',
    path: '/v1/auth/verify',
    summary: 'Validate a service PAT; list the seller endpoints',
    auth: 'service',
  },
  {
    method: 'GET',
    path: '/v1/agents',
    summary: "List the account's agents (paged), each with its first 100 active wallets",
    auth: 'owner_session',
    query: pageQuerySchema,
  },
  {
    method: 'POST',
    path: '/v1/agents',
    summary: 'Spawn an agent with its own Treasury account',
    auth: 'owner_session',
  },
  { method: 'GET', path: '/v1/agents/{id}', summary: 'Read an agent and its wallets', auth: 'session_or_agent' },
  {
    method: 'POST',
    path: '/v1/agents/{id}/wallets',
    summary: "Add a wallet to the agent's Treasury account",
    auth: 'session_or_agent',
  },
  { method: 'POST', path: '/v1/pats', summary: 'Create a PAT', auth: 'owner_session', body: createPatBodySchema },
  { method: 'GET', path: '/v1/pats', summary: 'List PATs (paged)', auth: 'owner_session', query: pageQuerySchema },
  { method: 'DELETE', path: '/v1/pats/{id}', summary: 'Revoke a PAT', auth: 'owner_session' },
  {
    method: 'PATCH',
    path: '/v1/pats/{id}',
    summary: 'Change a buyer PAT daily cap',
    auth: 'owner_session',
    body: patchPatBodySchema,
  },
  {
    method: 'POST',
    path: '/v1/sellers',
    summary: 'Register a seller; returns a service PAT',
    auth: 'session',
    body: createSellerBodySchema,
  },
  {
    method: 'GET',
    path: '/v1/sellers',
    summary: 'List the account sellers (paged)',
    auth: 'session',
    query: pageQuerySchema,
  },
  { method: 'GET', path: '/v1/sellers/{id}', summary: 'Read a seller', auth: 'session_or_service' },
  {
    method: 'PATCH',
    path: '/v1/sellers/{id}',
    summary: 'Update a seller (name, origin, openapi_url, capabilities, payout mode)',
    auth: 'session_or_service',
    body: updateSellerBodySchema,
  },
  { method: 'GET', path: '/v1/sellers/{id}/banking', summary: 'Banking state', auth: 'session_or_service' },
  {
    method: 'PUT',
    path: '/v1/sellers/{id}/banking',
    summary: 'Declare legal entity and country',
    auth: 'session_or_service',
    body: bankingBodySchema,
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/banking/verify',
    summary: 'Mark declared banking details verified',
    auth: 'operator',
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/verify',
    summary: 'The origin verification token and path',
    auth: 'session_or_service',
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/verify',
    summary: 'Verify origin ownership via /.well-known/xx-verification.txt',
    auth: 'session_or_service',
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/refresh',
    summary: 'Re-ingest the OpenAPI document',
    auth: 'session_or_service',
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/payouts',
    summary: 'Accrued payables of verified ledger rows, pending and flush history (paged, newest first)',
    auth: 'session_or_service',
    query: pageQuerySchema,
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/pay-to',
    summary: 'The pay-to addresses the seller proved (ledger rows are verified against them)',
    auth: 'session_or_service',
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/pay-to',
    summary: 'Prove a pay-to address with its EIP-191 signature of the claim message',
    auth: 'owner_session',
    body: payToBodySchema,
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/payouts/flush',
    summary: "Record a payout of everything accrued; answers the payouts' first page",
    auth: 'owner_session',
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/pats',
    summary: 'Create a service PAT',
    auth: 'owner_session',
    body: issuePatBodySchema,
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/pats',
    summary: 'List service PATs (paged)',
    auth: 'owner_session',
    query: pageQuerySchema,
  },
  { method: 'DELETE', path: '/v1/sellers/{id}/pats/{pat_id}', summary: 'Revoke a service PAT', auth: 'owner_session' },
  { method: 'POST', path: '/v1/sellers/{id}/suspend', summary: 'Suspend (soft delete)', auth: 'session_or_service' },
  { method: 'POST', path: '/v1/sellers/{id}/resume', summary: 'Resume', auth: 'session_or_service' },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/endpoints',
    summary: 'Create an endpoint',
    auth: 'session_or_service',
    body: createEndpointBodySchema,
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/endpoints',
    summary: 'List endpoints (paged)',
    auth: 'session_or_service',
    query: pageQuerySchema,
  },
  {
    method: 'PATCH',
    path: '/v1/sellers/{id}/endpoints/{endpoint_id}',
    summary: 'Update an endpoint',
    auth: 'session_or_service',
    body: updateEndpointBodySchema,
  },
  {
    method: 'DELETE',
    path: '/v1/sellers/{id}/endpoints/{endpoint_id}',
    summary: 'Delete an endpoint without ledger rows',
    auth: 'session_or_service',
  },
  {
    method: 'POST',
    path: '/v1/ledger',
    summary:
      'Report a ledger row (seller middleware; idempotent per seller and tx_hash; pending until verified on chain)',
    auth: 'service',
    body: ledgerReportBodySchema,
  },
  {
    method: 'POST',
    path: '/v1/ledger/batch',
    summary: 'Report up to 100 ledger rows; per-row outcome (seller middleware)',
    auth: 'service',
    body: ledgerBatchBodySchema,
  },
  {
    method: 'GET',
    path: '/v1/ledger',
    summary: 'List ledger rows (filters, cursor)',
    auth: 'session_or_service',
    query: ledgerQuerySchema,
  },
  {
    method: 'GET',
    path: '/v1/ledger/revenue',
    summary: 'Revenue summary of verified rows (pending and rejected shown apart)',
    auth: 'session_or_service',
    query: ledgerQuerySchema,
  },
  {
    method: 'GET',
    path: '/v1/ledger/export',
    summary: 'CSV export (format=csv)',
    auth: 'session_or_service',
    query: ledgerQuerySchema,
  },
];
