/**
 * The settings that bound what one account makes of the keys and rows every tenant shares (docs/security-model.md,
 * Tenant isolation bounds): their environment variables, part of the API's one configuration schema
 * (./app-config.ts spreads them in, through ./bounds-config.ts), and the fields of `AppConfig` they become.
 * - agents (src/api/platform/agent-bounds.ts): each is an agent row, a Treasury account, an HSM/KMS account key and
 *   a signer authority row; at most TREASURY_MAX_AGENTS_PER_ACCOUNT per account.
 *
 * Defends: a bound outside its range (each variable is a bounded integer). Does not defend: the bounds themselves
 * (the modules named above enforce them).
 */
import { z } from 'zod';
import { envInt } from '../../shared/env-int.js';

/** Agents an account may hold by default: far more than one owner runs by hand, few enough to bound its keys. */
export const DEFAULT_MAX_AGENTS_PER_ACCOUNT = 100;

export const accountBoundsEnvShape = {
  /** Agents one account may hold (each its own Treasury account and HSM/KMS key); past it 409 `agent_limit_reached`. */
  TREASURY_MAX_AGENTS_PER_ACCOUNT: envInt(1, 100_000, DEFAULT_MAX_AGENTS_PER_ACCOUNT),
};

type AccountBoundsEnv = { [K in keyof typeof accountBoundsEnvShape]: z.infer<(typeof accountBoundsEnvShape)[K]> };

export type AccountBoundsConfig = Readonly<{
  /** TREASURY_MAX_AGENTS_PER_ACCOUNT (src/api/platform/agent-bounds.ts). */
  maxAgentsPerAccount: number;
}>;

export function accountBoundsConfigOf(e: AccountBoundsEnv): AccountBoundsConfig {
  return { maxAgentsPerAccount: e.TREASURY_MAX_AGENTS_PER_ACCOUNT };
}
