/**
 * `get_balance`: a wallet's USDC balance read on chain, whether the figure is stale (the RPC was down: the
 * last reading) and when it was read. Read-only.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { balanceSchema, walletViewSchema } from '../../../../sdk/treasury-client-schemas.js';
import { walletIdInput, type ToolContext } from '../tool-context.js';
import { toolOutputSchema } from '../tool-output.js';
import { guarded, toolOk } from '../tool-results.js';

const b = balanceSchema.shape;
const getBalanceAnswer = z.object({
  wallet_id: walletViewSchema.shape.id,
  address: walletViewSchema.shape.address,
  network: b.network,
  balance_usd: b.balance_usd,
  stale: b.stale,
  /** When the figure was read from the chain. */
  read_at: b.updated_at,
});

export function registerGetBalance(server: McpServer, tools: ToolContext): void {
  server.registerTool(
    'get_balance',
    {
      title: 'Wallet balance',
      description: 'Read the USDC balance of a wallet (default the first), with a stale flag and when it was read.',
      inputSchema: { wallet_id: walletIdInput.optional() },
      outputSchema: toolOutputSchema(getBalanceAnswer),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ wallet_id }) =>
      guarded(async () => {
        const wallet = await tools.wallet(wallet_id);
        const b = await tools.sdk.getBalance(wallet.id);
        return toolOk(
          {
            wallet_id: wallet.id,
            address: wallet.address,
            network: b.network,
            balance_usd: b.balance_usd,
            stale: b.stale,
            read_at: b.updated_at,
          } satisfies z.output<typeof getBalanceAnswer>,
          `${b.balance_usd} USDC in ${wallet.id} (${b.network})${b.stale ? ', stale' : ''}, read at ${b.updated_at}.`,
        );
      }),
  );
}
