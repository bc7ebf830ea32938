/**
 * `list_wallets`: the agent's managed wallets — id, label, network, address, status, a summary of each
 * wallet's policy (its caps as set; lists and maps by their size, so a long allowlist does not flood the
 * answer) and its `policy_state` (owner-signed, or the signer's ceilings only). Read-only.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { walletViewSchema } from '../../../../sdk/treasury-client-schemas.js';
import type { ToolContext } from '../tool-context.js';
import { toolOutputSchema } from '../tool-output.js';
import { guarded, toolOk } from '../tool-results.js';

const w = walletViewSchema.shape;
const listWalletsAnswer = z.object({
  wallets: z.array(
    z.object({
      id: w.id,
      label: w.label,
      network: w.network,
      address: w.address,
      status: w.status,
      /** `policySummary` of the wallet's policy. */
      policy: z.record(z.string(), z.unknown()),
      policy_state: w.policy_state,
    }),
  ),
});

/** A policy as the model needs it: scalar settings as they are, arrays and objects by their size. */
export function policySummary(policy: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(policy)) {
    if (Array.isArray(value)) out[`${key}_count`] = value.length;
    else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      out[key] = entries.length <= 8 ? value : { entries: entries.length };
    } else out[key] = value;
  }
  return out;
}

export function registerListWallets(server: McpServer, tools: ToolContext): void {
  server.registerTool(
    'list_wallets',
    {
      title: 'List wallets',
      description:
        "List the agent's Treasury wallets (id, label, network, address, status, policy caps, whether the policy is owner-signed); use an id as wallet_id.",
      inputSchema: {},
      outputSchema: toolOutputSchema(listWalletsAnswer),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () =>
      guarded(async () => {
        const wallets = (await tools.sdk.listWallets()).map((w) => ({
          id: w.id,
          label: w.label,
          network: w.network,
          address: w.address,
          status: w.status,
          policy: policySummary(w.policy ?? {}),
          policy_state: w.policy_state,
        }));
        return toolOk({ wallets } satisfies z.output<typeof listWalletsAnswer>);
      }),
  );
}
