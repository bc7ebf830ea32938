/**
 * What the API answers about managed wallets and agents: a wallet (GET /v1/wallets/{id}, create, rotate,
 * revoke), a page of wallets, a wallet's USDC balance, an agent with its first active wallets. Defined once
 * here: the API's wallet and agent services are typed with the derived types; the buyer SDK's reply schemas
 * (src/sdk/treasury-client-schemas.ts) and the `xx` CLI are built on these.
 *
 * Defends: the server and its clients drifting apart silently; a client acting on a wallet whose address or
 * balance is not well-formed. Does not defend: a reply of the right shape with wrong content (an address that
 * is not the wallet's: the SDK's viem account checks what it signs). Keys are listed in the order the API writes them.
 */
import { z } from 'zod';
import { isRawAmount, isUsdString } from '../../../policy/money.js';
import { nextCursorField, pageOf, walletAddressField } from './response-fields.js';

export const walletStatusSchema = z.enum(['active', 'revoked']);

/**
 * Whether a wallet's policy is owner-signed (the signer accepted a document its policy authority signed, and
 * enforces it itself) or the signer applies only its own ceilings (docs/adr/0012-owner-signed-policies.md).
 */
export const policyStateSchema = z.enum(['owner_signed', 'ceilings_only']);
export type PolicyState = z.infer<typeof policyStateSchema>;

export const walletViewSchema = z.object({
  id: z.string(),
  account_id: z.string(),
  label: z.string().nullable(),
  chain: z.string(),
  network: z.string(),
  /** EVM: 0x + 40 hex; Solana: base58. */
  address: walletAddressField,
  policy: z.record(z.string(), z.unknown()),
  policy_state: policyStateSchema,
  status: walletStatusSchema,
  key_version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  revoked_at: z.string().nullable(),
});
export type WalletView = z.infer<typeof walletViewSchema>;

/** A page of GET /v1/wallets (oldest first). */
export const walletPageSchema = pageOf('wallets', walletViewSchema);
export type WalletPage = z.infer<typeof walletPageSchema>;

/** GET /v1/wallets/{id}/balance: USDC read on chain; `stale: true` with the last figure while the RPC is down. */
export const walletBalanceSchema = z.object({
  wallet_id: z.string(),
  network: z.string(),
  /** The chain's USDC: an ERC-20 contract, or a Solana mint. */
  asset: walletAddressField,
  address: walletAddressField,
  balance_raw: z.string().refine(isRawAmount, 'expected a raw token amount (base-10 integer string)'),
  balance_usd: z.string().refine(isUsdString, 'expected a USD decimal string'),
  stale: z.boolean(),
  /** When the figure was read from the chain (now for a fresh read). */
  updated_at: z.string(),
});
export type WalletBalance = z.infer<typeof walletBalanceSchema>;

/** An agent as GET /v1/agents/{id} answers it (and each row of GET /v1/agents). */
export const agentViewSchema = z.object({
  agent_id: z.string().regex(/^agt_[0-9a-f]{24}$/, 'expected an agent id (agt_…)'),
  label: z.string().nullable(),
  treasury_account_id: z.string(),
  created_at: z.string(),
  /** The agent's first 100 active wallets, oldest first. */
  wallets: z.array(walletViewSchema),
  /** Where `GET /v1/wallets?status=active&cursor=…` continues when it has more (else null). */
  wallets_next_cursor: nextCursorField,
});
export type AgentView = z.infer<typeof agentViewSchema>;

/** A page of GET /v1/agents (the account's agents, oldest first). */
export const agentPageSchema = pageOf('agents', agentViewSchema);
export type AgentPage = z.infer<typeof agentPageSchema>;
