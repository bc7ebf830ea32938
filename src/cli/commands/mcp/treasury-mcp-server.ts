/**
 * The `xx mcp` server: one McpServer with the buyer tools of ./tools — list_wallets, get_balance, pay,
 * check_policy, payment_history, discover — over one tool context (one agent PAT). A new server per transport (the
 * SDK binds a server to one transport; each HTTP session gets its own). There is deliberately no tool that
 * changes a policy, a cap, a PAT or a wallet: those stay with the account owner.
 */
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { cliVersion } from '../../core/cli-version.js';
import type { ToolContext } from './tool-context.js';
import { registerCheckPolicy } from './tools/check-policy-tool.js';
import { registerDiscover } from './tools/discover-tool.js';
import { registerGetBalance } from './tools/get-balance-tool.js';
import { registerListWallets } from './tools/list-wallets-tool.js';
import { registerPay } from './tools/pay-tool.js';
import { registerPaymentHistory } from './tools/payment-history-tool.js';

export function buildTreasuryMcpServer(tools: ToolContext): McpServer {
  const server = new McpServer(
    { name: 'treasury', version: cliVersion() },
    {
      instructions:
        'Pay for x402 APIs from Treasury-managed wallets. Call pay with the smallest max_usd the user accepts; a refusal names its recovery.kind and what to do next. Caps and policies can only be changed by a person.',
    },
  );
  registerListWallets(server, tools);
  registerGetBalance(server, tools);
  registerPay(server, tools);
  registerCheckPolicy(server, tools);
  registerPaymentHistory(server, tools);
  registerDiscover(server, tools);
  return server;
}
