/**
 * The catalogue entries of the wallet routes (wallets, their keys, policy, history, pay, transfer and upto
 * settlement); ./api-catalog.ts puts every family together (the agent routes: src/api/platform/agent-catalog.ts).
 *
 * Defends: a client generated from the document meeting these routes, replies or errors undescribed. Does
 * not defend: what the pay path decides (src/api/pay/).
 */
import type { CatalogEntry } from './catalog-entry.js';
import { KEY_RETIREMENT, PAYMENT_SIGNING } from './catalog-error-lists.js';
import {
  policyEvaluationSchema,
  settlementSchema,
  signedPaymentSchema,
  walletPolicySchema,
} from '../../../shared/api-responses/pay-responses.js';
import {
  walletBalanceSchema,
  walletPageSchema,
  walletViewSchema,
} from '../../../shared/api-responses/wallet-responses.js';
import { paymentPageSchema } from '../../../shared/api-responses/payment-history-responses.js';
import { walletAuditSchema, walletDecisionsSchema } from '../../../shared/api-responses/wallet-history-responses.js';
import {
  evaluateBodySchema,
  payBodySchema,
  putPolicyBodySchema,
  settlementBodySchema,
  transferBodySchema,
} from '../../pay/pay-schemas.js';
import { pageQuerySchema } from '../schemas/page-query-schema.js';
import {
  createWalletBodySchema,
  historyQuerySchema,
  keyRetirementBodySchema,
  listWalletsQuerySchema,
} from '../schemas/wallet-schemas.js';

export const WALLET_CATALOG: CatalogEntry[] = [
  {
    method: 'POST',
    path: '/v1/wallets',
    operationId: 'createWallet',
    summary: 'Create a sub-wallet (key generated in the HSM)',
    auth: 'treasury',
    body: createWalletBodySchema,
    replies: { 201: walletViewSchema },
    errors: ['chain_not_supported', 'account_not_found', 'signer_unavailable', 'wallet_limit_reached'],
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
  },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/balance',
    operationId: 'getWalletBalance',
    summary: 'USDC balance read on-chain (stale: true with the last figure while the RPC is down)',
    auth: 'treasury_or_agent',
    replies: { 200: walletBalanceSchema },
    errors: ['network_not_supported', 'chain_unavailable'],
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
    errors: KEY_RETIREMENT,
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
    errors: KEY_RETIREMENT,
  },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/policy',
    operationId: 'getWalletPolicy',
    summary: 'Read the policy',
    auth: 'treasury_or_agent',
    replies: { 200: walletPolicySchema },
  },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/decisions',
    operationId: 'listWalletDecisions',
    summary: 'Recent policy decisions (newest first): pd_ ids, outcome, violated rules, headroom',
    auth: 'treasury_or_agent',
    query: historyQuerySchema,
    replies: { 200: walletDecisionsSchema },
  },
  {
    method: 'GET',
    path: '/v1/wallets/{id}/audit',
    operationId: 'readWalletAudit',
    summary: "Recent audit events (newest first) and the wallet's hash-chain verification state",
    auth: 'treasury_or_agent',
    query: historyQuerySchema,
    replies: { 200: walletAuditSchema },
  },
  {
    method: 'PUT',
    path: '/v1/wallets/{id}/policy',
    operationId: 'putWalletPolicy',
    summary: 'Replace the policy',
    auth: 'treasury',
    body: putPolicyBodySchema,
    replies: { 200: walletPolicySchema },
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/policy/evaluate',
    operationId: 'evaluateWalletPolicy',
    summary: 'Dry run of a payment against the policy',
    auth: 'treasury_or_agent',
    body: evaluateBodySchema,
    replies: { 200: policyEvaluationSchema },
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
      ...PAYMENT_SIGNING,
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
      ...PAYMENT_SIGNING,
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
      'settlement_not_applicable',
      'settlement_not_verified',
      'settlement_unconfirmed',
      'settlement_already_recorded',
      'chain_unavailable',
    ],
  },
];
