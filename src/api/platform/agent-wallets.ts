/**
 * What an agent needs of the wallets wing, as a port the platform declares and the wallets wing implements
 * (src/api/wallets/agent-wallets-port.ts): the agents' wallets shown with them, and a wallet added to an agent's
 * Treasury account. The platform never imports the wallets wing; the wallets wing imports the platform.
 *
 * Defends: a dependency running back up from the platform (accounts, agents, PATs) to the wallets built on it.
 * Does not defend: what a wallet may be (the wallets wing's rules: chains, bounds, default policy).
 */
import type { WalletPage, WalletView } from '../../shared/api-responses/wallet-responses.js';

/** A wallet to add to an agent (the body of POST /v1/agents/{id}/wallets, its `network` folded into `chain`). */
export interface AgentWalletInput {
  label?: string | undefined;
  chain?: string | undefined;
  policy?: Record<string, unknown> | undefined;
}

export interface AgentWallets {
  /** The first `limit` active wallets of each Treasury account, one read for all of them. */
  firstActivePages(treasuryAccountIds: readonly string[], limit: number): Promise<Map<string, WalletPage>>;
  /**
   * A wallet in the agent's Treasury account. `agentBearer`: the agent acting with its own PAT (not the owner),
   * whose daily cap bounds the wallet's default policy; null for the owner.
   */
  createForAgent(
    treasuryAccountId: string,
    input: AgentWalletInput,
    actor: string,
    agentBearer: { patDailyCapMicro: bigint | null } | null,
  ): Promise<WalletView>;
}
