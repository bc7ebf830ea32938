/**
 * The catalogue of every route: its operationId, who may call it, its request schema and its replies (each a
 * zod schema of src/shared/api-responses/ or the error envelope) — the single source of `GET /v1/openapi.json`
 * (./openapi-document.ts builds the document from it, zod 4's toJSONSchema turning each schema into JSON
 * Schema, so no shape is written twice). Tests compare it with the routes the app serves (both ways), validate
 * the document with an OpenAPI validator, and parse real replies with the schemas named here.
 *
 * Defends: a client generated from the document meeting routes, replies or errors it does not describe.
 * Does not defend: the details an error code adds beside the envelope's four keys (they vary per code).
 */
import { z } from 'zod';
import type { ErrorCode } from '../../../shared/error-codes.js';
import {
  apiKeyRevokedSchema,
  issuedTreasuryPatSchema,
  mintedAccountSchema,
} from '../../../shared/api-responses/account-responses.js';
import {
  identityNonceSchema,
  loggedOutSchema,
  sessionGrantSchema,
  sessionsRevokedSchema,
  whoamiSchema,
} from '../../../shared/api-responses/identity-responses.js';
import { livenessSchema, openApiDocumentSchema, readinessSchema } from '../../../shared/api-responses/ops-responses.js';
import {
  policyEvaluationSchema,
  settlementSchema,
  signedPaymentSchema,
  walletPolicySchema,
} from '../../../shared/api-responses/pay-responses.js';
import { createdPatSchema, patPageSchema, patViewSchema } from '../../../shared/api-responses/pat-responses.js';
import {
  ledgerBatchResultSchema,
  ledgerPageSchema,
  ledgerReportedSchema,
  payoutsPageSchema,
  payToListSchema,
  revenueSummarySchema,
} from '../../../shared/api-responses/seller-ledger-responses.js';
import {
  bankingViewSchema,
  createdSellerSchema,
  endpointPageSchema,
  endpointViewSchema,
  originVerificationSchema,
  refreshReportSchema,
  sellerAuthVerifySchema,
  sellerPageSchema,
  sellerViewSchema,
  verifiedSellerSchema,
} from '../../../shared/api-responses/seller-responses.js';
import {
  agentPageSchema,
  agentViewSchema,
  walletBalanceSchema,
  walletPageSchema,
  walletViewSchema,
} from '../../../shared/api-responses/wallet-responses.js';
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
import { paymentPageSchema } from '../../../shared/api-responses/payment-history-responses.js';
import { gateCatalogueSchema } from '../../../shared/api-responses/gate-responses.js';
import { walletAuditSchema, walletDecisionsSchema } from '../../../shared/api-responses/wallet-history-responses.js';
import { issuePatBodySchema, mintTreasuryBodySchema } from '../schemas/treasury-schemas.js';
import {
  createWalletBodySchema,
  historyQuerySchema,
  keyRetirementBodySchema,
  listWalletsQuerySchema,
} from '../schemas/wallet-schemas.js';
import { agentWalletBodySchema, spawnAgentBodySchema } from '../schemas/agent-schemas.js';

/**
 * Who may call a route. `session` is any account session, including one exchanged from an agent PAT;
 * `owner_session` is money control and takes only a session from a SIWE / SIWS sign-in (an exchanged one
 * gets 403 `fresh_sign_in_required`; src/api/auth/session-powers.ts). `treasury_or_agent` and
 * `session_or_agent` admit an agent PAT and the sessions exchanged from it, acting as that agent;
 * `treasury_or_operator` the account's own Treasury bearer or the operator token.
 */
export type Auth =
  | 'none'
  | 'operator'
  | 'treasury'
  | 'treasury_or_operator'
  | 'treasury_or_agent'
  | 'session'
  | 'owner_session'
  | 'session_or_agent'
  | 'session_or_service'
  | 'service'
  | 'gate'
  | 'agent'
  | 'any';

/** A reply that is not JSON: its media type and what it holds. */
export interface RawReply {
  mediaTypes: string[];
  description: string;
}

/** A success reply: a JSON body's schema, a non-JSON body, or `null` for no body (204). */
export type Reply = z.ZodType | RawReply | null;

export interface CatalogEntry {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** Stable camelCase; clients generated from the document name their methods after it. */
  operationId: string;
  summary: string;
  auth: Auth;
  body?: z.ZodType;
  /** The body may be left out (it defaults to `{}`). */
  bodyOptional?: true;
  query?: z.ZodType;
  /** The route honours an `Idempotency-Key` header (a retry with the same key and body is the same operation). */
  idempotencyKey?: true;
  /** Success replies by status. */
  replies: Partial<Record<200 | 201 | 204 | 503, Reply>>;
  /** Error codes this route answers beyond those every route of its kind answers (./openapi-errors.ts). */
  errors?: ErrorCode[];
}

const WALLET: ErrorCode[] = ['wallet_not_found', 'wallet_revoked'];
const SIGNER: ErrorCode[] = ['signer_refused', 'signer_limit_exceeded', 'signer_unavailable'];
const SELLER: ErrorCode[] = ['seller_not_found'];
const PROMETHEUS: RawReply = { mediaTypes: ['text/plain'], description: 'Prometheus text exposition (version 0.0.4)' };

export const API_CATALOG: CatalogEntry[] = [
  {
    method: 'GET',
    path: '/livez',
    operationId: 'livez',
    summary: 'Liveness',
    auth: 'none',
    replies: { 200: livenessSchema },
  },
  {
    method: 'GET',
    path: '/health',
    operationId: 'health',
    summary: 'Liveness (alias)',
    auth: 'none',
    replies: { 200: livenessSchema },
  },
  {
    method: 'GET',
    path: '/readyz',
    operationId: 'readyz',
    summary: 'Readiness: database and signer',
    auth: 'none',
    replies: { 200: readinessSchema, 503: readinessSchema },
  },
  {
    method: 'GET',
    path: '/metrics',
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    auth: 'none',
    replies: { 200: PROMETHEUS },
  },
  {
    method: 'GET',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    auth: 'none',
    replies: { 200: openApiDocumentSchema },
  },
  {
    method: 'GET',
    path: '/docs',
    operationId: 'getApiReference',
    summary: 'This document rendered as a reference page (Swagger UI; strict CSP, no inline script)',
    auth: 'none',
    replies: { 200: { mediaTypes: ['text/html'], description: 'The reference page' } },
  },
  {
    method: 'GET',
    path: '/docs/{asset}',
    operationId: 'getApiReferenceAsset',
    summary: "A static asset of the reference page (Swagger UI's script and style sheet, the page's initializer)",
    auth: 'none',
    replies: {
      200: {
        mediaTypes: ['text/javascript', 'text/css', 'image/png'],
        description: 'The asset, served from this origin',
      },
    },
    errors: ['not_found'],
  },
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
    summary: 'Issue a Treasury-scoped PAT',
    auth: 'treasury_or_operator',
    body: issuePatBodySchema,
    replies: { 201: issuedTreasuryPatSchema },
    errors: ['account_not_found'],
  },
  {
    method: 'POST',
    path: '/v1/treasuries/{id}/api-key/revoke',
    operationId: 'revokeTreasuryApiKey',
    summary: "Revoke the account's legacy xx_treasury_sk_ api key (idempotent)",
    auth: 'treasury_or_operator',
    replies: { 200: apiKeyRevokedSchema },
    errors: ['account_not_found', 'api_key_not_found'],
  },
  {
    method: 'POST',
    path: '/v1/wallets',
    operationId: 'createWallet',
    summary: 'Create a sub-wallet (key generated in the HSM)',
    auth: 'treasury',
    body: createWalletBodySchema,
    replies: { 201: walletViewSchema },
    errors: ['chain_not_supported', 'account_not_found', 'signer_unavailable'],
  },
  {
    method: 'GET',
    path: '/v1/wallets',
    operationId: 'listWallets',
    summary: 'List wallets',
    auth: 'treasury_or_agent',
    query: listWalletsQuerySchema,
    replies: { 200: walletPageSchema },
  },
  {
    method: 'GET',
    path: '/v1/wallets/{id}',
    operationId: 'getWallet',
    summary: 'Read a wallet (410 when revoked)',
    auth: 'treasury_or_agent',
    replies: { 200: walletViewSchema },
    errors: WALLET,
  },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/balance',
    operationId: 'getWalletBalance',
    summary: 'USDC balance read on-chain (stale: true with the last figure while the RPC is down)',
    auth: 'treasury_or_agent',
    replies: { 200: walletBalanceSchema },
    errors: [...WALLET, 'network_not_supported', 'chain_unavailable'],
  },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/payments',
    operationId: 'listWalletPayments',
    summary:
      "The wallet's payments, newest first (paged): status (signed, settled, expired, released), amount, payee, resource, decision id, tx hash when known",
    auth: 'treasury_or_agent',
    query: pageQuerySchema,
    replies: { 200: paymentPageSchema },
    errors: WALLET,
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/rotate',
    operationId: 'rotateWallet',
    summary: 'Rotate: same id, new key and address (refused while the old address holds USDC, unless abandon_balance)',
    auth: 'treasury',
    body: keyRetirementBodySchema,
    bodyOptional: true,
    replies: { 200: walletViewSchema },
    errors: [...WALLET, 'wallet_has_balance', 'balance_unknown', 'signer_unavailable'],
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/revoke',
    operationId: 'revokeWallet',
    summary: 'Revoke: every later call answers 410 (refused while the address holds USDC, unless abandon_balance)',
    auth: 'treasury',
    body: keyRetirementBodySchema,
    bodyOptional: true,
    replies: { 200: walletViewSchema },
    errors: [...WALLET, 'wallet_has_balance', 'balance_unknown', 'signer_unavailable'],
  },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/policy',
    operationId: 'getWalletPolicy',
    summary: 'Read the policy',
    auth: 'treasury_or_agent',
    replies: { 200: walletPolicySchema },
    errors: WALLET,
  },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/decisions',
    operationId: 'listWalletDecisions',
    summary: 'Recent policy decisions (newest first): pd_ ids, outcome, violated rules, headroom',
    auth: 'treasury_or_agent',
    query: historyQuerySchema,
    replies: { 200: walletDecisionsSchema },
    errors: WALLET,
  },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/audit',
    operationId: 'readWalletAudit',
    summary: "Recent audit events (newest first) and the wallet's hash-chain verification state",
    auth: 'treasury_or_agent',
    query: historyQuerySchema,
    replies: { 200: walletAuditSchema },
    errors: WALLET,
  },
  {
    method: 'PUT',
    path: '/v1/wallets/{id}/policy',
    operationId: 'putWalletPolicy',
    summary: 'Replace the policy',
    auth: 'treasury',
    body: putPolicyBodySchema,
    replies: { 200: walletPolicySchema },
    errors: WALLET,
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/policy/evaluate',
    operationId: 'evaluateWalletPolicy',
    summary: 'Dry run of a payment against the policy',
    auth: 'treasury_or_agent',
    body: evaluateBodySchema,
    replies: { 200: policyEvaluationSchema },
    errors: WALLET,
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/pay',
    operationId: 'payFromWallet',
    summary: 'Sign an x402 payment (Idempotency-Key supported)',
    auth: 'treasury_or_agent',
    body: payBodySchema,
    idempotencyKey: true,
    replies: { 200: signedPaymentSchema },
    errors: [
      ...WALLET,
      ...SIGNER,
      'invalid_idempotency_key',
      'idempotency_key_conflict',
      'policy_denied',
      'MGMT_6014',
      'network_not_supported',
      'asset_not_supported',
      'scheme_not_supported',
      'upto_requirements_invalid',
      'permit2_allowance_required',
      'missing_eip712_domain',
      'invalid_authorization_terms',
      'nonce_already_used',
      'unstorable_value',
      'chain_unavailable',
    ],
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/transfer',
    operationId: 'transferFromWallet',
    summary: 'Sign a transfer (Idempotency-Key supported)',
    auth: 'treasury_or_agent',
    body: transferBodySchema,
    idempotencyKey: true,
    replies: { 200: signedPaymentSchema },
    errors: [
      ...WALLET,
      ...SIGNER,
      'invalid_idempotency_key',
      'idempotency_key_conflict',
      'policy_denied',
      'MGMT_6014',
      'transfer_not_permitted_with_capability_cap',
      'network_not_supported',
      'unstorable_value',
    ],
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/authorizations/{authorization_id}/settlement',
    operationId: 'recordUptoSettlement',
    summary: 'Record an upto settlement, verified on chain; gives back the unsettled part of the signed maximum',
    auth: 'treasury_or_agent',
    body: settlementBodySchema,
    replies: { 200: settlementSchema },
    errors: [
      ...WALLET,
      'authorization_not_found',
      'settlement_not_applicable',
      'settlement_not_verified',
      'settlement_unconfirmed',
      'settlement_already_recorded',
      'chain_unavailable',
    ],
  },
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
    summary: 'Validate a service PAT; list the seller endpoints',
    auth: 'service',
    replies: { 200: sellerAuthVerifySchema },
    errors: [...SELLER, 'seller_suspended'],
  },
  {
    method: 'GET',
    path: '/v1/agents',
    operationId: 'listAgents',
    summary: "List the account's agents (paged), each with its first 100 active wallets",
    auth: 'owner_session',
    query: pageQuerySchema,
    replies: { 200: agentPageSchema },
  },
  {
    method: 'POST',
    path: '/v1/agents',
    operationId: 'spawnAgent',
    summary: 'Spawn an agent with its own Treasury account',
    auth: 'owner_session',
    body: spawnAgentBodySchema,
    bodyOptional: true,
    replies: { 201: agentViewSchema },
    errors: ['signer_unavailable'],
  },
  {
    method: 'GET',
    path: '/v1/agents/{id}',
    operationId: 'getAgent',
    summary: 'Read an agent and its wallets',
    auth: 'session_or_agent',
    replies: { 200: agentViewSchema },
    errors: ['agent_not_found'],
  },
  {
    method: 'GET',
    path: '/v1/agents/{id}/payments',
    operationId: 'listAgentPayments',
    summary: "The payments of every wallet of the agent, newest first (paged; each as in the wallet's payments)",
    auth: 'session_or_agent',
    query: pageQuerySchema,
    replies: { 200: paymentPageSchema },
    errors: ['agent_not_found'],
  },
  {
    method: 'POST',
    path: '/v1/agents/{id}/wallets',
    operationId: 'createAgentWallet',
    summary: "Add a wallet to the agent's Treasury account",
    auth: 'session_or_agent',
    body: agentWalletBodySchema,
    bodyOptional: true,
    replies: { 201: walletViewSchema },
    errors: ['agent_not_found', 'chain_not_supported', 'signer_unavailable'],
  },
  {
    method: 'POST',
    path: '/v1/pats',
    operationId: 'createPat',
    summary: 'Create a PAT',
    auth: 'owner_session',
    body: createPatBodySchema,
    replies: { 201: createdPatSchema },
    errors: ['scope_not_found'],
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
    errors: ['pat_not_found'],
  },
  {
    method: 'PATCH',
    path: '/v1/pats/{id}',
    operationId: 'updatePatDailyCap',
    summary: 'Change a buyer PAT daily cap',
    auth: 'owner_session',
    body: patchPatBodySchema,
    replies: { 200: patViewSchema },
    errors: ['pat_not_found'],
  },
  {
    method: 'POST',
    path: '/v1/sellers',
    operationId: 'createSeller',
    summary: 'Register a seller; returns a service PAT',
    auth: 'session',
    body: createSellerBodySchema,
    replies: { 201: createdSellerSchema },
    errors: ['slug_taken'],
  },
  {
    method: 'GET',
    path: '/v1/sellers',
    operationId: 'listSellers',
    summary: 'List the account sellers (paged)',
    auth: 'session',
    query: pageQuerySchema,
    replies: { 200: sellerPageSchema },
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}',
    operationId: 'getSeller',
    summary: 'Read a seller',
    auth: 'session_or_service',
    replies: { 200: sellerViewSchema },
    errors: SELLER,
  },
  {
    method: 'PATCH',
    path: '/v1/sellers/{id}',
    operationId: 'updateSeller',
    summary: 'Update a seller (name, origin, openapi_url, capabilities, payout mode)',
    auth: 'session_or_service',
    body: updateSellerBodySchema,
    replies: { 200: sellerViewSchema },
    errors: [...SELLER, 'slug_taken'],
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/banking',
    operationId: 'getSellerBanking',
    summary: 'Banking state',
    auth: 'session_or_service',
    replies: { 200: bankingViewSchema },
    errors: SELLER,
  },
  {
    method: 'PUT',
    path: '/v1/sellers/{id}/banking',
    operationId: 'putSellerBanking',
    summary: 'Declare legal entity and country',
    auth: 'session_or_service',
    body: bankingBodySchema,
    replies: { 200: bankingViewSchema },
    errors: SELLER,
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/banking/verify',
    operationId: 'verifySellerBanking',
    summary: 'Mark declared banking details verified',
    auth: 'operator',
    replies: { 200: bankingViewSchema },
    errors: [...SELLER, 'banking_not_declared'],
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/verify',
    operationId: 'getSellerOriginVerification',
    summary: 'The origin verification token and path',
    auth: 'session_or_service',
    replies: { 200: originVerificationSchema },
    errors: [...SELLER, 'origin_not_configured'],
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/verify',
    operationId: 'verifySellerOrigin',
    summary: 'Verify origin ownership via /.well-known/xx-verification.txt',
    auth: 'session_or_service',
    replies: { 200: verifiedSellerSchema },
    errors: [
      ...SELLER,
      'origin_not_configured',
      'well_known_not_found',
      'verification_token_mismatch',
      'origin_unreachable',
      'origin_redirect_refused',
      'origin_not_public',
      'origin_port_refused',
      'origin_response_too_large',
    ],
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/refresh',
    operationId: 'refreshSellerOpenApi',
    summary: 'Re-ingest the OpenAPI document',
    auth: 'session_or_service',
    replies: { 200: refreshReportSchema },
    errors: [
      ...SELLER,
      'openapi_url_not_configured',
      'openapi_not_found',
      'openapi_invalid',
      'origin_unreachable',
      'origin_redirect_refused',
      'origin_not_public',
      'origin_port_refused',
      'origin_response_too_large',
    ],
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/payouts',
    operationId: 'listSellerPayouts',
    summary: 'Accrued payables of verified ledger rows, pending and flush history (paged, newest first)',
    auth: 'session_or_service',
    query: pageQuerySchema,
    replies: { 200: payoutsPageSchema },
    errors: SELLER,
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/pay-to',
    operationId: 'listSellerPayTo',
    summary: 'The pay-to addresses the seller proved (ledger rows are verified against them)',
    auth: 'session_or_service',
    replies: { 200: payToListSchema },
    errors: SELLER,
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/pay-to',
    operationId: 'proveSellerPayTo',
    summary: 'Prove a pay-to address with its EIP-191 signature of the claim message',
    auth: 'owner_session',
    body: payToBodySchema,
    replies: { 200: payToListSchema },
    errors: [...SELLER, 'pay_to_signature_invalid'],
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/payouts/flush',
    operationId: 'flushSellerPayouts',
    summary: "Record a payout of everything accrued; answers the payouts' first page",
    auth: 'owner_session',
    replies: { 200: payoutsPageSchema },
    errors: [...SELLER, 'payouts_not_applicable'],
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/pats',
    operationId: 'createServicePat',
    summary: 'Create a service PAT',
    auth: 'owner_session',
    body: issuePatBodySchema,
    replies: { 201: createdPatSchema },
    errors: SELLER,
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/pats',
    operationId: 'listServicePats',
    summary: 'List service PATs (paged)',
    auth: 'owner_session',
    query: pageQuerySchema,
    replies: { 200: patPageSchema },
    errors: SELLER,
  },
  {
    method: 'DELETE',
    path: '/v1/sellers/{id}/pats/{pat_id}',
    operationId: 'revokeServicePat',
    summary: 'Revoke a service PAT',
    auth: 'owner_session',
    replies: { 200: patViewSchema },
    errors: [...SELLER, 'pat_not_found'],
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/suspend',
    operationId: 'suspendSeller',
    summary: 'Suspend (soft delete)',
    auth: 'session_or_service',
    replies: { 200: sellerViewSchema },
    errors: SELLER,
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/resume',
    operationId: 'resumeSeller',
    summary: 'Resume',
    auth: 'session_or_service',
    replies: { 200: sellerViewSchema },
    errors: SELLER,
  },
  {
    method: 'POST',
    path: '/v1/sellers/{id}/endpoints',
    operationId: 'createSellerEndpoint',
    summary: 'Create an endpoint',
    auth: 'session_or_service',
    body: createEndpointBodySchema,
    replies: { 201: endpointViewSchema },
    errors: [...SELLER, 'endpoint_exists'],
  },
  {
    method: 'GET',
    path: '/v1/sellers/{id}/endpoints',
    operationId: 'listSellerEndpoints',
    summary: 'List endpoints (paged)',
    auth: 'session_or_service',
    query: pageQuerySchema,
    replies: { 200: endpointPageSchema },
    errors: SELLER,
  },
  {
    method: 'PATCH',
    path: '/v1/sellers/{id}/endpoints/{endpoint_id}',
    operationId: 'updateSellerEndpoint',
    summary: 'Update an endpoint',
    auth: 'session_or_service',
    body: updateEndpointBodySchema,
    replies: { 200: endpointViewSchema },
    errors: [...SELLER, 'endpoint_not_found', 'endpoint_exists'],
  },
  {
    method: 'DELETE',
    path: '/v1/sellers/{id}/endpoints/{endpoint_id}',
    operationId: 'deleteSellerEndpoint',
    summary: 'Delete an endpoint without ledger rows',
    auth: 'session_or_service',
    replies: { 204: null },
    errors: [...SELLER, 'endpoint_not_found', 'endpoint_has_ledger'],
  },
  {
    method: 'POST',
    path: '/v1/ledger',
    operationId: 'reportLedgerRow',
    summary:
      'Report a ledger row (seller middleware; idempotent per seller and tx_hash; pending until verified on chain)',
    auth: 'service',
    body: ledgerReportBodySchema,
    replies: { 200: ledgerReportedSchema, 201: ledgerReportedSchema },
    errors: [...SELLER, 'seller_suspended', 'endpoint_not_found', 'network_not_supported', 'unstorable_value'],
  },
  {
    method: 'GET',
    path: '/v1/gate/catalogue',
    operationId: 'readGateCatalogue',
    summary: "The account's managed-proxy (mpp) sellers, origins, pay-to and endpoints (the gate)",
    auth: 'gate',
    replies: { 200: gateCatalogueSchema },
  },
  {
    method: 'POST',
    path: '/v1/gate/ledger',
    operationId: 'reportGateLedgerRow',
    summary: 'Report one ledger row of a paid request the gate settled (endpoint_id required)',
    auth: 'gate',
    body: ledgerReportBodySchema,
    replies: { 200: ledgerReportedSchema, 201: ledgerReportedSchema },
    errors: ['seller_suspended', 'endpoint_not_found', 'network_not_supported', 'unstorable_value'],
  },
  {
    method: 'POST',
    path: '/v1/gate/ledger/batch',
    operationId: 'reportGateLedgerBatch',
    summary: 'Report up to 100 gate ledger rows; per-row outcome',
    auth: 'gate',
    body: ledgerBatchBodySchema,
    replies: { 200: ledgerBatchResultSchema },
  },
  {
    method: 'POST',
    path: '/v1/ledger/batch',
    operationId: 'reportLedgerBatch',
    summary: 'Report up to 100 ledger rows; per-row outcome (seller middleware)',
    auth: 'service',
    body: ledgerBatchBodySchema,
    replies: { 200: ledgerBatchResultSchema },
    errors: [...SELLER, 'seller_suspended'],
  },
  {
    method: 'GET',
    path: '/v1/ledger',
    operationId: 'listLedgerRows',
    summary: 'List ledger rows (filters, cursor)',
    auth: 'session_or_service',
    query: ledgerQuerySchema,
    replies: { 200: ledgerPageSchema },
    errors: SELLER,
  },
  {
    method: 'GET',
    path: '/v1/ledger/revenue',
    operationId: 'getLedgerRevenue',
    summary: 'Revenue summary of verified rows (pending and rejected shown apart)',
    auth: 'session_or_service',
    query: ledgerQuerySchema,
    replies: { 200: revenueSummarySchema },
    errors: SELLER,
  },
  {
    method: 'GET',
    path: '/v1/ledger/export',
    operationId: 'exportLedgerCsv',
    summary: 'CSV export (format=csv)',
    auth: 'session_or_service',
    query: ledgerQuerySchema,
    replies: { 200: { mediaTypes: ['text/csv'], description: 'The ledger rows as CSV (an attachment)' } },
    errors: SELLER,
  },
];
