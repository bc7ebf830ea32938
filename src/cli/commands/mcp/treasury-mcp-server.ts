/**
 * The `xx mcp` server: one McpServer with the buyer tools of ./tools — list_wallets, get_balance, pay,
 * check_policy, payment_history — over one tool context (one agent PAT). A new server per transport (the
 * SDK binds a server to one transport; each HTTP session gets its own). There is deliberately no tool that
 * changes a policy, a cap, a PAT or a wallet: those stay with the account owner.
 */
import fs from 'node:fs';
import path from 'node:path';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolContext } from './tool-context.js';
import { registerCheckPolicy } from './tools/check-policy-tool.js';
import { registerGetBalance } from './tools/get-balance-tool.js';
import { registerListWallets } from './tools/list-wallets-tool.js';
import { registerPay } from './tools/pay-tool.js';
import { registerPaymentHistory } from './tools/payment-history-tool.js';

function packageVersion(): string {
  try {
    const file = path.resolve(import.meta.dirname, '../../../../package.json');
    const version = (JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: unknown }).version;
    return typeof version === 'string' ? version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export function buildTreasuryMcpServer(tools: ToolContext): McpServer {
  const server = new McpServer(
    { name: 'treasury', version: packageVersion() },
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
  return server;
}
