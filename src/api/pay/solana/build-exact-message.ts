/**
 * The transaction message of a Solana x402 `exact` payment, built by the official client itself
 * (`@x402/svm`'s ExactSvmScheme): SetComputeUnitLimit, SetComputeUnitPrice, TransferChecked of `amount` from
 * ATA(wallet, mint) to ATA(payTo, mint) with the wallet as authority, and a Memo (`extra.memo`, or 16 random
 * bytes as hex), fee payer `extra.feePayer`, the latest blockhash from the RPC (TREASURY_SOLANA_RPC_URL).
 * The client is handed a signer that signs nothing: it only keeps the message bytes it was asked to sign, so
 * the wallet's key signs them later, after the payment is decided and recorded (../pay-service.ts).
 *
 * Defends: a message of another shape than the one sellers and facilitators expect (the official code builds
 * it); a seller's `recentBlockhash` in `extra` (only feePayer and memo are passed on: the blockhash is read
 * from the RPC); a slow RPC holding the request (the build is bounded by the RPC timeout; 503
 * `chain_unavailable` with the failure kept as ../../chain/rpc-failure.ts keeps it).
 * Does not defend: what the message says (the signer decodes it and signs only the x402 exact shape), nor a
 * lying RPC (a wrong blockhash only makes the transaction fail to land).
 */
import { createHash } from 'node:crypto';
import {
  getBase64Decoder,
  type Address,
  type SignatureBytes,
  type SignatureDictionary,
  type TransactionPartialSigner,
} from '@solana/kit';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { rpcFailure } from '../../chain/rpc-failure.js';
import { AppError } from '../../errors/app-error.js';

export interface SolanaExactRequest {
  network: string;
  /** The mint (the chain's USDC). */
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  feePayer: string;
  memo?: string | undefined;
}

export interface SolanaExactMessage {
  /** The message bytes, base64. */
  message: string;
  /** SHA-256 of the message bytes, 0x + 64 hex. */
  messageHash: string;
}

export async function buildExactMessage(
  rpc: { url: string; timeoutMs: number },
  wallet: string,
  request: SolanaExactRequest,
): Promise<SolanaExactMessage> {
  let captured: Uint8Array | undefined;
  const keeper: TransactionPartialSigner = {
    address: wallet as Address,
    signTransactions: (transactions) => {
      captured = new Uint8Array(transactions[0]!.messageBytes);
      // A placeholder, never used: the wire transaction is assembled from the message and the real signature.
      return Promise.resolve(
        transactions.map(() => ({ [wallet]: new Uint8Array(64) as SignatureBytes }) as SignatureDictionary),
      );
    },
  };
  const { memo, feePayer, ...rest } = request;
  const requirements = { scheme: 'exact', ...rest, extra: { feePayer, ...(memo === undefined ? {} : { memo }) } };
  try {
    await withTimeout(
      new ExactSvmScheme(keeper, { rpcUrl: rpc.url }).createPaymentPayload(2, requirements as never),
      rpc.timeoutMs,
    );
  } catch (err) {
    throw new AppError('chain_unavailable', { fields: { network: request.network }, cause: rpcFailure(err) });
  }
  if (!captured) throw new AppError('internal_error', { message: 'The payment message was not built.' });
  return {
    message: getBase64Decoder().decode(captured),
    messageHash: `0x${createHash('sha256').update(captured).digest('hex')}`,
  };
}

/** `promise`, or a rejection after `ms`. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the Solana RPC did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
