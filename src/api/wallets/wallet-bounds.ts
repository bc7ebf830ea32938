/**
 * Tenant isolation bounds on wallets (docs/security-model.md, Tenant isolation bounds): how many active
 * wallets — each an HSM or KMS key, drawn from one key quota every tenant shares — an agent and an account
 * may hold, and the policy a wallet gets when an agent bearer creates it.
 *
 * Defends: one agent PAT creating wallets without end (keys cost money and quota for everyone); an agent's
 * new wallet spending without a policy. The count is taken under a transaction-scoped advisory lock on the
 * account that owns the wallets (the platform account of an agent, else the Treasury account itself), held
 * until the wallet's row commits, so concurrent creations cannot overshoot. The default policy is never
 * looser than the agent PAT's daily cap: its daily cap is that cap (the configured default without one) and
 * its per-payment cap the smaller of that and the configured per-payment default. This file holds the rule
 * (pure); the count and its lock are the store's (./store/pg-wallet-counts.ts).
 * The platform's own Treasury account (owner_type `platform`: the merchant of record's collection wallets) has
 * no bound of its own: each of its wallets is one seller's on one network, so a tenant's part of it is bounded by
 * its sellers (TREASURY_MAX_SELLERS_PER_ACCOUNT × the networks collected on) — one bound shared by every tenant
 * would let one tenant's sellers take every other tenant's collection wallets.
 * Does not defend: revoked wallets (their keys are destroyed; they do not count); agents themselves (each has
 * an account key; spawning one needs the owner's sign-in session); an owner's session setting a looser policy
 * afterwards (that is the owner's call).
 */
import { formatUsd, parseUsd } from '../../../policy/money.js';
import type { WalletPolicy } from '../../../policy/policy-schema.js';
import type { WalletBoundsConfig } from '../config/app-config.js';
import { AppError } from '../errors/app-error.js';

/**
 * Whose wallets are counted: an agent's Treasury account within its platform account, a Treasury account alone,
 * or the platform's own account (not counted: its wallets are bounded per seller).
 */
export type WalletOwner =
  | { kind: 'agent'; treasuryAccountId: string; platformAccountId: string }
  | { kind: 'treasury'; treasuryAccountId: string }
  | { kind: 'platform'; treasuryAccountId: string };

export interface WalletCounts {
  /** Active wallets of the agent (undefined for a Treasury account of no agent). */
  agent: number | undefined;
  /** Active wallets of the whole account (undefined for the platform's own account: no account bound). */
  account: number | undefined;
}

/** Throws 409 `wallet_limit_reached` when one more wallet would pass a bound (the agent's checked first). */
export function refuseOverWalletBounds(counts: WalletCounts, bounds: WalletBoundsConfig): void {
  if (counts.agent !== undefined && counts.agent >= bounds.maxPerAgent)
    throw limitReached('agent', bounds.maxPerAgent, counts.agent);
  if (counts.account !== undefined && counts.account >= bounds.maxPerAccount)
    throw limitReached('account', bounds.maxPerAccount, counts.account);
}

function limitReached(scope: 'agent' | 'account', limit: number, active: number): AppError {
  return new AppError('wallet_limit_reached', { fields: { scope, limit, active_wallets: active } });
}

/**
 * The policy of a wallet an agent bearer creates: daily cap the PAT's daily cap (micro-USD) or, with none,
 * the configured default; per-payment cap the smaller of the daily cap and the configured per-payment default.
 */
export function defaultAgentWalletPolicy(patDailyCapMicro: bigint | null, bounds: WalletBoundsConfig): WalletPolicy {
  const daily = patDailyCapMicro ?? parseUsd(bounds.agentDailyCapUsd);
  const perTxDefault = parseUsd(bounds.agentPerTxCapUsd);
  const perTx = perTxDefault < daily ? perTxDefault : daily;
  return { per_tx_cap_usd: formatUsd(perTx), daily_cap_usd: formatUsd(daily) };
}
