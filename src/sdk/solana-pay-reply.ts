/**
 * What `POST /v1/wallets/{id}/pay` answers for a Solana `accepts` entry (docs/buyer-sdk.md, "Solana"): the
 * usual fields of a signed payment (authorization and decision ids, wallet, network, asset, USD amount,
 * headroom, `scheme: 'exact'`), the wallet's base58 signature, the transfer it signed (`solana_transfer`) and
 * `transaction`, the base64 wire transaction the wallet signed with the fee-payer slot left empty — exactly
 * what the x402 SVM payload `{ transaction }` carries. `payReplySchema` is
 * either reply (EVM or Solana), the schema `TreasuryClient.pay` parses with.
 *
 * Defends against: a reply of the wrong shape being sent to a seller (the network must be a `solana:` one, the
 * mint and addresses base58, the transaction bounded base64 of at most a Solana packet). Unknown keys are kept.
 * Does not defend against: a well-formed transaction for other terms — x402-signed-payment.ts decodes it and
 * compares its transfer with the entry asked for before anything is sent.
 */
import { z } from 'zod';
import { signedPaymentSchema, solanaSignedPaymentSchema } from '../shared/api-responses/pay-responses.js';

/** A Solana transaction is at most 1,232 bytes on the wire: 1,644 base64 characters. */
export const MAX_SOLANA_TRANSACTION_BASE64 = 1644;

export const solanaTransactionSchema = z
  .string()
  .max(MAX_SOLANA_TRANSACTION_BASE64)
  .regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, 'expected base64')
  .min(4);

/**
 * The API's own reply schema (src/shared/api-responses/pay-responses.ts), with the bounds a client holds it
 * to: a `solana:` network and at most a Solana packet of base64 as the transaction.
 */
export const signedSolanaPaymentSchema = solanaSignedPaymentSchema.extend({
  transaction: solanaTransactionSchema,
  network: z.string().regex(/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/, 'expected a solana CAIP-2 network'),
});
export type SignedSolanaPayment = z.infer<typeof signedSolanaPaymentSchema>;

/** The pay reply: an EVM signature (exact or upto) or a Solana transaction. */
export const payReplySchema = z.union([signedSolanaPaymentSchema, signedPaymentSchema]);
export type PayReply = z.infer<typeof payReplySchema>;

/** True for Treasury's answer to a Solana entry (it carries the transaction, not an EVM signature). */
export function isSolanaPayReply(reply: PayReply): reply is SignedSolanaPayment {
  return typeof reply.transaction === 'string' && reply.network.startsWith('solana:');
}
