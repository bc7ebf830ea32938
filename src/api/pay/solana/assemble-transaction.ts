/**
 * The wire transaction of a signed Solana `exact` payment, as the x402 payload `{ transaction }` carries it:
 * the message with one signature slot per required signer, in the message's own order — the fee payer's
 * left empty (the facilitator fills it), the wallet's holding its signature — encoded with kit's transaction
 * encoder, base64. The message is read with the signer's codec (kit's layout without kit's BigInt base58:
 * ../../../../signer/protocol/solana-message-codec.ts).
 *
 * Defends: a transaction whose signatures do not match its signers (the slots come from the message header,
 * and the wallet must be one of them). Does not defend: a signature that does not verify (the signer checked
 * it before answering; the chain checks it again).
 */
import { base58 } from '@scure/base';
import {
  getBase64Decoder,
  getBase64Encoder,
  getTransactionEncoder,
  type Address,
  type SignatureBytes,
  type Transaction,
} from '@solana/kit';
import { solanaMessageDecoder } from '../../../../signer/protocol/signer-protocol.js';

const base64Bytes = getBase64Encoder();
const base64Text = getBase64Decoder();
const transactionEncoder = getTransactionEncoder();

export function assembleTransaction(messageBase64: string, wallet: string, signatureBase58: string): string {
  const messageBytes = new Uint8Array(base64Bytes.encode(messageBase64));
  const message = solanaMessageDecoder.decode(messageBytes);
  const signers = message.staticAccounts.slice(0, message.header.numSignerAccounts);
  if (!signers.includes(wallet as Address)) throw new Error('the wallet does not sign this message');
  const signature = base58.decode(signatureBase58) as SignatureBytes;
  if (signature.length !== 64) throw new Error('an Ed25519 signature is 64 bytes');
  const signatures = Object.fromEntries(signers.map((s) => [s, s === wallet ? signature : null]));
  const transaction = { messageBytes, signatures } as unknown as Transaction;
  return base64Text.decode(transactionEncoder.encode(transaction));
}
