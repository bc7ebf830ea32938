/**
 * The managed wallet an owner command acts on: the one named (`wal_…`), else the agent's first, read with the
 * buyer's bearer (XX_PAT, --profile, the active profile or agent). Shared by `xx wallet policy` and
 * `xx wallet rotate|revoke`.
 */
import { walletViewSchema, type WalletView } from '../../../shared/api-responses/wallet-responses.js';
import { agentWithEveryWallet } from '../../core/agent-wallets.js';
import type { ApiClient } from '../../core/api-client.js';
import { agentOfBearer } from '../../core/buyer-agent.js';
import { requireBuyerBearer, type BearerFlags } from '../../core/buyer-bearer.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { badArgument } from '../seller/seller-kit.js';

const WALLET_ID = /^wal_[0-9a-f]{24}$/;

/**
 * The wallet named (or the agent's first), read with the agent's credentials, and a client bearing them. Also
 * how `xx wallet rotate|revoke` find the wallet's account (./wallet-retire-commands.ts).
 */
export async function targetWallet(
  ctx: CliContext,
  flags: BearerFlags,
  ref: string | undefined,
): Promise<{ client: ApiClient; wallet: WalletView }> {
  if (ref !== undefined && !WALLET_ID.test(ref)) throw badArgument('<wallet>', 'a managed wallet id (wal_…)');
  const bearer = requireBuyerBearer(ctx, flags);
  const client = ctx.client(bearer.token, bearer.server);
  let id = ref ?? bearer.agent?.wallets[0]?.id;
  if (id === undefined) {
    const { agentId } = await agentOfBearer(ctx, bearer);
    id = (await ctx.spin('Loading the agent', () => agentWithEveryWallet(client, agentId))).wallets[0]?.id;
  }
  if (id === undefined)
    throw new CliError({
      code: 'no_wallet',
      userMessage: 'The agent has no managed wallet. Add one with `xx agent wallets add`.',
    });
  const walletId = id;
  const wallet = await ctx.spin('Loading the wallet', () =>
    client.request('GET', `/v1/wallets/${walletId}`, { reply: walletViewSchema }),
  );
  return { client, wallet };
}
