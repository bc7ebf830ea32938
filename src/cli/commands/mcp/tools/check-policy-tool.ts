/**
 * `check_policy`: would the wallet's policy let it pay `amount_usd` to `to` now? Asks Treasury's dry run
 * (POST /v1/wallets/{id}/policy/evaluate): allowed, the rules that refuse it, and the headroom under each limit
 * before this payment, allowed or refused alike (../policy-headroom.ts), with `headroom_usd`, the least of its
 * dollar figures. Nothing is recorded or signed; it cannot change a policy or a cap (no tool can).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { isAddress } from '@solana/kit';
import { z } from 'zod';
import { capabilitySchema } from '../../../../sdk/treasury-client-schemas.js';
import { walletIdInput, type ToolContext } from '../tool-context.js';
import { headroomSchema, policyEvaluationSchema } from '../../../../shared/api-responses/pay-responses.js';
import { usdField } from '../../../../shared/api-responses/response-fields.js';
import { headroomBeforePayment, tightestUsd } from '../policy-headroom.js';
import { toolOutputSchema } from '../tool-output.js';
import { guarded, toolOk } from '../tool-results.js';
import { usdInput } from './pay-tool.js';

/** The answer: allowed, the refusing rules as the API names them, headroom before this payment (../policy-headroom.ts). */
const checkPolicyAnswer = z.object({
  wallet_id: policyEvaluationSchema.shape.wallet_id,
  allowed: policyEvaluationSchema.shape.allowed,
  refusing_rules: policyEvaluationSchema.shape.violations,
  headroom: headroomSchema,
  headroom_usd: usdField.nullable(),
});

export function registerCheckPolicy(server: McpServer, tools: ToolContext): void {
  server.registerTool(
    'check_policy',
    {
      title: 'Check a payment against the policy',
      description:
        "Dry-run a payment of amount_usd to address `to` against the wallet's policy: allowed, refusing rules, and headroom — the room under each limit before this payment, allowed or not (headroom_usd: the largest payment the dollar limits let through now).",
      inputSchema: {
        wallet_id: walletIdInput.optional(),
        to: z
          .union([
            z.string().regex(/^0x[0-9a-fA-F]{40}$/),
            z
              .string()
              .regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
              .refine((v) => isAddress(v), 'a base58 Solana address of 32 bytes'),
          ])
          .describe('The payee address: 0x… on Base, base58 on Solana (as discover and the 402 name it)'),
        amount_usd: usdInput,
        capability: capabilitySchema
          .optional()
          .describe('The capability the payment is for, when the policy caps capabilities'),
      },
      outputSchema: toolOutputSchema(checkPolicyAnswer),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) =>
      guarded(async () => {
        const wallet = await tools.wallet(input.wallet_id);
        const decision = await tools.api.request('POST', `/v1/wallets/${wallet.id}/policy/evaluate`, {
          body: {
            kind: 'pay',
            to: input.to,
            amount_usd: input.amount_usd,
            ...(input.capability ? { capability: input.capability } : {}),
          },
          reply: policyEvaluationSchema,
        });
        // The reply is checked, not stripped: only the headroom figures this version knows are carried on.
        const known = headroomSchema.parse(decision.headroom);
        const headroom = headroomBeforePayment(known, decision.allowed, input.amount_usd);
        return toolOk({
          wallet_id: wallet.id,
          allowed: decision.allowed,
          refusing_rules: decision.violations,
          headroom,
          headroom_usd: tightestUsd(headroom),
        } satisfies z.output<typeof checkPolicyAnswer>);
      }),
  );
}
