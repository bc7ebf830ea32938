/**
 * The bound on agents per account (TREASURY_MAX_AGENTS_PER_ACCOUNT): how many agents one platform account may hold,
 * whatever made them (POST /v1/agents, or the default agent a first sign-in makes).
 *
 * Defends: a tenant spawning agents without end — each is an agent row, a Treasury account, an HSM/KMS account key
 * and a signer authority row, none of which is ever deleted. The count is read under a transaction-scoped advisory
 * lock on the account, held until the new agent's rows commit (./store/pg-agent-counts.ts), and before the HSM is
 * asked for a key, so concurrent spawns cannot overshoot and a refused one makes no key. This file holds the rule
 * (pure).
 * Does not defend: one person signing in as many accounts (the `init` rate-limit bucket bounds that per client
 * address only); the wallets of the agents (TREASURY_MAX_WALLETS_PER_ACCOUNT bounds those).
 */
import { AppError } from '../errors/app-error.js';

/** Throws 409 `agent_limit_reached` when one more agent would pass the bound. */
export function refuseOverAgentBound(agents: number, limit: number): void {
  if (agents >= limit) throw new AppError('agent_limit_reached', { fields: { limit } });
}
