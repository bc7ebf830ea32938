/**
 * `payment_history`: the agent's recent payments, newest first — of one wallet, or of all its wallets — with
 * status (signed, settled, expired, released), amount, payee, resource, decision id and tx hash when known
 * (GET /v1/wallets/{id}/payments, GET /v1/agents/{id}/payments). `cursor` continues a page. Read-only.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { paymentPageSchema, type PaymentPage } from '../../../../shared/api-responses/payment-history-responses.js';
import { walletIdInput, type ToolContext } from '../tool-context.js';
import { toolOutputSchema } from '../tool-output.js';
import { guarded, toolOk } from '../tool-results.js';

export function registerPaymentHistory(server: McpServer, tools: ToolContext): void {
  server.registerTool(
    'payment_history',
    {
      title: 'Payment history',
      description:
        "List the agent's recent payments (status, amount, payee, resource, tx hash), newest first; next_cursor pages on.",
      inputSchema: {
        wallet_id: walletIdInput.optional().describe('Only this wallet (default: every wallet of the agent)'),
        limit: z.number().int().min(1).max(100).optional().describe('Payments per page (default 20)'),
        cursor: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,200}$/)
          .optional()
          .describe('next_cursor of the previous page'),
      },
      outputSchema: toolOutputSchema(paymentPageSchema),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) =>
      guarded(async () => {
        const path = input.wallet_id
          ? `/v1/wallets/${input.wallet_id}/payments`
          : `/v1/agents/${await tools.agentId()}/payments`;
        const reply = await tools.api.request('GET', path, {
          query: { limit: input.limit ?? 20, cursor: input.cursor },
          reply: paymentPageSchema,
        });
        const page = paymentPageSchema.parse(reply); // the fields the outputSchema announces, no others
        return toolOk({ payments: page.payments, next_cursor: page.next_cursor } satisfies PaymentPage);
      }),
  );
}
