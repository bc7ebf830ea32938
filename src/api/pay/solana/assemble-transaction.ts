/**
 * The wire transaction of a signed Solana `exact` payment, as the x402 payload `{ transaction }` carries it:
 * the message with one signature slot per required signer, in the message's own order — the fee payer's
 * left empty (the facilitator fills it), the wallet's holding its signature — encoded with kit's transaction
 * encoder, base64.
 *
 * Defends: a transaction whose signatures do not match its signers (the slots come from the message header,
 * and the wallet must be one of them). Does not defend: a signature that does not verify (the signer checked
 * it before answering; the chain checks it again).
 */
import {
  getBase58Encoder,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionEncoder,
  type Address,
  type SignatureBytes,
  type Transaction,
} from '@solana/kit';

export function assembleTransaction(messageBase64: string, wallet: string, signatureBase58: string): string {
  const messageBytes = new Uint8Array(getBase64Encoder().encode(messageBase64));
  const message = getCompiledTransactionMessageDecoder().decode(messageBytes);
  const signers = message.staticAccounts.slice(0, message.header.numSignerAccounts);
  if (!signers.includes(wallet as Address)) throw new Error('the wallet does not sign this message');
  const signature = new Uint8Array(getBase58Encoder().encode(signatureBase58)) as SignatureBytes;
  const signatures = Object.fromEntries(signers.map((s) => [s, s === wallet ? signature : null]));
  const transaction = { messageBytes, signatures } as unknown as Transaction;
  return getBase64Decoder().decode(getTransactionEncoder().encode(transaction));
}
