/**
 * The `pay` tool's answer (./pay-tool.ts): what was paid — status, whether a payment was made, the purchase's
 * identifier (also on a refusal), the wallet, the amount and network that were signed and the transaction when it
 * has a transaction's shape (null when nothing was paid; none of them the seller's receipt), what an `upto`
 * settlement moved and gave back — and the seller's answer wrapped as untrusted data (../seller-content.ts). Its
 * `outputSchema` (../tool-output.ts) also announces the refusal shape; a seller's HTTP error is a refusal whose
 * `details` carry the payment fields and the seller's answer, and a seller's refusal of the payment one whose
 * `details.seller_response` carries its reason or receipt, wrapped the same way.
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
  /** What was signed (an `upto` payment's settled amount once Treasury verified it), not the seller's receipt; null when unpaid. */
  amount_usd: z.string().nullable(),
  /** The receipt's transaction when it has a settlement's shape on `network` (0x + 64 hex; a 64-byte base58 signature); else null. */
  tx_hash: z.string().nullable(),
  /** The CAIP-2 network the payment was signed for; null when unpaid. */
  network: z.string().nullable(),
  settled_usd: z.string().optional(),
  given_back_usd: z.string().optional(),
  seller_response: sellerResponseSchema,
});
export type PayAnswer = z.infer<typeof payAnswerSchema>;

export const payOutputSchema = toolOutputSchema(payAnswerSchema);
