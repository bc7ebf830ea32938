/**
 * The catalogue entries of the pay wing's routes (./pay-routes.ts): a wallet's policy (read, replace, dry run),
 * pay, transfer and the settlement of an `exact` or `upto` payment; src/api/api-catalog.ts puts every family together.
 *
 * Defends: a client generated from the document meeting these routes, replies or errors undescribed. Does
 * not defend: what the pay path decides (./pay-service.ts).
 */
import { z } from 'zod';
import type { CatalogEntry } from '../http/openapi/catalog-entry.js';
import { CHAIN_READ, PAY_ADMISSION, PAYMENT_SIGNING, SIGNER_CALL } from '../http/openapi/catalog-error-lists.js';
import {
  policyEvaluationSchema,
  settlementSchema,
  signedPaymentSchema,
  solanaSignedPaymentSchema,
  walletPolicySchema,
} from '../../shared/api-responses/pay-responses.js';
import {
  evaluateBodySchema,
  payBodySchema,
  putPolicyBodySchema,
  putSignedPolicyBodySchema,
  settlementBodySchema,
  transferBodySchema,
} from './pay-schemas.js';

export const PAY_CATALOG: CatalogEntry[] = [
  {
    method: 'GET',
    path: '/v1/wallets/{id}/policy',
    operationId: 'getWalletPolicy',
    summary: 'Read the policy, and what the signer holds of it (owner_policy)',
    auth: 'treasury_or_agent',
    replies: { 200: walletPolicySchema },
    errors: SIGNER_CALL,
  },
  {
    method: 'PUT',
    path: '/v1/wallets/{id}/policy',
    operationId: 'putWalletPolicy',
    summary: 'Replace the policy (unsigned; refused while the signer holds an owner-signed one)',
    auth: 'treasury',
    body: putPolicyBodySchema,
    replies: { 200: walletPolicySchema },
    errors: ['policy_signature_required', ...SIGNER_CALL],
  },
  {
    method: 'PUT',
    path: '/v1/wallets/{id}/policy/signed',
    operationId: 'putSignedWalletPolicy',
    summary:
      "Replace the policy with a document signed by the wallet's policy authority (the signer verifies and enforces it)",
    auth: 'treasury',
    body: putSignedPolicyBodySchema,
    replies: { 200: walletPolicySchema },
    errors: ['policy_signature_invalid', 'policy_version_stale', ...SIGNER_CALL],
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
    replies: { 200: z.union([...signedPaymentSchema.options, solanaSignedPaymentSchema]) },
    errors: [
      ...PAYMENT_SIGNING,
      ...PAY_ADMISSION,
      'network_not_supported',
      'asset_not_supported',
      'scheme_not_supported',
      'upto_requirements_invalid',
      'svm_requirements_invalid',
      'wallet_key_rotated',
      'permit2_allowance_required',
      'missing_eip712_domain',
      'invalid_authorization_terms',
      'nonce_already_used',
      'unstorable_value',
      ...CHAIN_READ,
      'payment_identifier_conflict',
      'payment_identifier_mismatch',
      'challenge_origin_not_seller',
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
      ...PAY_ADMISSION,
      'transfer_not_permitted_with_capability_cap',
      'transfer_not_supported',
      'network_not_supported',
      'unstorable_value',
    ],
  },
  {
    method: 'POST',
    path: '/v1/wallets/{id}/authorizations/{authorization_id}/settlement',
    // The operationId predates exact settlements; kept, so generated clients keep their method.
    operationId: 'recordUptoSettlement',
    summary:
      'Record the settlement of an exact or upto payment, verified on chain (upto: gives back the unsettled part of the signed maximum)',
    auth: 'treasury_or_agent',
    body: settlementBodySchema,
    replies: { 200: settlementSchema },
    errors: [
      'settlement_not_applicable',
      'settlement_not_verified',
      'settlement_unconfirmed',
      'settlement_already_recorded',
      ...CHAIN_READ,
    ],
  },
];
