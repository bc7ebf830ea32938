/**
 * The `pay` tool's answer (./pay-tool.ts): what was paid — status, whether a payment was made, the purchase's
 * identifier (also on a refusal), the wallet, the amount, the transaction and the network (null when nothing was
 * paid), what an `upto` settlement moved and gave back — and the seller's answer wrapped as untrusted data (../seller-content.ts). Its `outputSchema`
 * (../tool-output.ts) also announces the refusal shape; a seller's HTTP error is a refusal whose `details` carry
 * the payment fields and the seller's answer.
 */
import { z } from 'zod';
import { sellerResponseSchema } from '../seller-content.js';
import { toolOutputSchema } from '../tool-output.js';

export const payAnswerSchema = z.object({
  /** The seller's HTTP status. */
  status: z.number().int(),
  paid: z.boolean(),
  /** The purchase's x402 payment identifier: `pay` again with it retries this purchase, never paying twice. */
  purchase_id: z.string(),
  wallet_id: z.string(),
  amount_usd: z.string().nullable(),
  tx_hash: z.string().nullable(),
  network: z.string().nullable(),
  settled_usd: z.string().optional(),
  given_back_usd: z.string().optional(),
  seller_response: sellerResponseSchema,
});
export type PayAnswer = z.infer<typeof payAnswerSchema>;

export const payOutputSchema = toolOutputSchema(payAnswerSchema);
