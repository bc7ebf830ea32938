/**
 * The catalogue entries of the agent routes (./agent-routes.ts: agents, their wallets and payments);
 * src/api/api-catalog.ts puts every family together.
 *
 * Defends: a client generated from the document meeting these routes, replies or errors undescribed. Does
 * not defend: who may call them (./agent-routes.ts).
 */
import type { CatalogEntry } from '../http/openapi/catalog-entry.js';
import { pageQuerySchema } from '../http/schemas/page-query-schema.js';
import { paymentPageSchema } from '../../shared/api-responses/payment-history-responses.js';
import { agentPageSchema, agentViewSchema, walletViewSchema } from '../../shared/api-responses/wallet-responses.js';
import { agentWalletBodySchema, spawnAgentBodySchema } from './agent-schemas.js';
import { SIGNER_CALL } from '../http/openapi/catalog-error-lists.js';

export const AGENT_CATALOG: CatalogEntry[] = [
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
    errors: ['agent_limit_reached', ...SIGNER_CALL, 'hsm_unsupported'],
  },
  {
    method: 'GET',
    path: '/v1/agents/{id}',
    operationId: 'getAgent',
    summary: 'Read an agent and its wallets',
    auth: 'session_or_agent',
    replies: { 200: agentViewSchema },
  },
  {
    method: 'GET',
    path: '/v1/agents/{id}/payments',
    operationId: 'listAgentPayments',
    summary: "The payments of every wallet of the agent, newest first (paged; each as in the wallet's payments)",
    auth: 'session_or_agent',
    query: pageQuerySchema,
    replies: { 200: paymentPageSchema },
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
    errors: ['chain_not_supported', ...SIGNER_CALL, 'hsm_unsupported', 'wallet_limit_reached'],
  },
];
