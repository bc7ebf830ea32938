/**
 * `payment_history`: the agent's recent payments, newest first — of one wallet, or of all its wallets — with
 * status (signed, settled, expired, released), amount, payee, resource, decision id and tx hash when known
 * (GET /v1/wallets/{id}/payments, GET /v1/agents/{id}/payments). `cursor` continues a page. Read-only.
 *
 * Defends: a seller's stored words passing for Treasury's — a payment's `resource` is whatever the seller's
 * x402 `accepts` entry said (up to 2,048 characters), so it is handed on as `{trust: "untrusted", text}` and,
 * in the text, only between markers a seller cannot guess (../seller-text.ts); every other field is
 * Treasury's own or checked by the API (ids, status, amounts, a CAIP-2 network, an address, the buyer's
 * capability, a verified tx hash). Does not defend: a model that follows a seller's words anyway.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { paymentPageSchema, paymentViewSchema } from '../../../../shared/api-responses/payment-history-responses.js';
import { sellerText, sellerTextBlock, sellerTextSchema } from '../seller-text.js';
import { walletIdInput, type ToolContext } from '../tool-context.js';
import { toolOutputSchema } from '../tool-output.js';
import { guarded, toolOk } from '../tool-results.js';

const historyAnswer = z.object({
  payments: z.array(paymentViewSchema.extend({ resource: sellerTextSchema.nullable() })),
  next_cursor: paymentPageSchema.shape.next_cursor,
});
type HistoryAnswer = z.output<typeof historyAnswer>;

/** The answer as text: Treasury's fields as JSON, then the sellers' resources, by payment id, between markers. */
function historyText(answer: HistoryAnswer): string {
  const payments = answer.payments.map(({ resource: _seller, ...own }) => own);
  const resources = answer.payments.flatMap((p) => (p.resource ? [[p.id, p.resource] as const] : []));
  return [
    `${payments.length} payment(s), newest first${answer.next_cursor ? '; next_cursor pages on' : ''}.`,
    JSON.stringify({ payments, next_cursor: answer.next_cursor }),
    ...(resources.length
      ? [sellerTextBlock("Each payment's resource (what its seller named), by payment id, is", resources)]
      : []),
  ].join('\n');
}

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
      outputSchema: toolOutputSchema(historyAnswer),
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
        const answer = {
          payments: page.payments.map((p) => ({ ...p, resource: p.resource === null ? null : sellerText(p.resource) })),
          next_cursor: page.next_cursor,
        } satisfies HistoryAnswer;
        return toolOk(answer, historyText(answer));
      }),
  );
}
