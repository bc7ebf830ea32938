/**
 * The catalogue entries of the wallet routes (wallets, their keys, balance, payments, history and the signer's policy
 * receipt);
 * src/api/api-catalog.ts puts every family together. The wallet's policy, pay, transfer and `upto` settlement
 * routes are the pay wing's (src/api/pay/pay-catalog.ts).
 *
 * Defends: a client generated from the document meeting these routes, replies or errors undescribed. Does
 * not defend: what the pay path decides (src/api/pay/).
 */
import type { CatalogEntry } from '../http/openapi/catalog-entry.js';
import { CHAIN_READ, KEY_RETIREMENT, SIGNER_CALL } from '../http/openapi/catalog-error-lists.js';
import {
  walletBalanceSchema,
  walletPageSchema,
  walletViewSchema,
} from '../../shared/api-responses/wallet-responses.js';
import { paymentPageSchema } from '../../shared/api-responses/payment-history-responses.js';
import { walletAuditSchema, walletDecisionsSchema } from '../../shared/api-responses/wallet-history-responses.js';
import { pageQuerySchema } from '../http/schemas/page-query-schema.js';
import {
  createWalletBodySchema,
  historyQuerySchema,
  keyRetirementBodySchema,
  listWalletsQuerySchema,
} from './wallet-schemas.js';
import { policyReceiptQuerySchema, policyReceiptSchema } from './policy-receipt.js';

export const WALLET_CATALOG: CatalogEntry[] = [
  {
    method: 'POST',
    path: '/v1/wallets',
    operationId: 'createWallet',
    summary: 'Create a sub-wallet (key generated in the HSM)',
    auth: 'treasury',
    body: createWalletBodySchema,
    replies: { 201: walletViewSchema },
    errors: ['chain_not_supported', 'account_not_found', ...SIGNER_CALL, 'hsm_unsupported', 'wallet_limit_reached'],
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
    errors: ['network_not_supported', ...CHAIN_READ],
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
    method: 'GET',
    path: '/v1/wallets/{id}/policy/receipt',
    operationId: 'getWalletPolicyReceipt',
    summary:
      "The signer's receipt of the policy it holds for the wallet (version, hash, authority, its time, the nonce), signed by the wallet's key (EIP-191, or a Solana off-chain message)",
    auth: 'treasury_or_agent',
    query: policyReceiptQuerySchema,
    replies: { 200: policyReceiptSchema },
    errors: ['policy_receipt_unavailable', ...SIGNER_CALL, 'signer_limit_exceeded'],
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
];
