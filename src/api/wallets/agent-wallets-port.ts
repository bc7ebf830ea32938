/**
 * The wallets wing's side of the agents' port (src/api/platform/agent-wallets.ts): an agent's wallets are
 * wallets of its Treasury account, and one an agent bearer adds gets a default policy no looser than its
 * PAT's daily cap (./wallet-bounds.ts).
 *
 * Defends: an agent bearer's wallet without a bounded policy. Does not defend: who may add one (the agents'
 * service checks the caller).
 */
import type { WalletBoundsConfig } from '../config/app-config.js';
import type { AgentWallets } from '../platform/agent-wallets.js';
import { defaultAgentWalletPolicy } from './wallet-bounds.js';
import type { WalletService } from './wallet-service.js';

export function agentWalletsOf(
  wallets: Pick<WalletService, 'firstActivePages' | 'create'>,
  bounds: WalletBoundsConfig,
): AgentWallets {
  return {
    firstActivePages: (ids, limit) => wallets.firstActivePages(ids, limit),
    createForAgent: (treasuryAccountId, input, actor, agentBearer) =>
      wallets.create(treasuryAccountId, input, actor, {
        defaultPolicy:
          agentBearer === null ? undefined : defaultAgentWalletPolicy(agentBearer.patDailyCapMicro, bounds),
      }),
  };
}
