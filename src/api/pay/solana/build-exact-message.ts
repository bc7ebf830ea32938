/**
 * The transaction message of a Solana x402 `exact` payment, built by the official client itself
 * (`@x402/svm`'s ExactSvmScheme): SetComputeUnitLimit, SetComputeUnitPrice, TransferChecked of `amount` from
 * ATA(wallet, mint) to ATA(payTo, mint) with the wallet as authority, and a Memo (`extra.memo`, or 16 random
 * bytes as hex), fee payer `extra.feePayer`, on a blockhash read from the deployment's RPC
 * (./recent-blockhash.ts). The client is handed a signer that signs nothing: the message is read back from the
 * transaction it returns, and the wallet's key signs it later, after the payment is decided and recorded
 * (../pay-service.ts).
 *
 * The client is kept per wallet (at most `MAX_CLIENTS`, least recently used out), as the official client is
 * meant to be used: it reads the mint's token program and decimals once and keeps them, where a client made
 * for each payment read the mint from the RPC for every payment. The blockhash is given to it in
 * `extra.recentBlockhash`, its documented input, so it makes no RPC call of its own for it.
 *
 * Defends: a message of another shape than the one sellers and facilitators expect (the official code builds
 * it); a seller's `recentBlockhash` in `extra` (only feePayer and memo are passed on: the blockhash is the
 * deployment's RPC's); a slow RPC holding the request (the build is bounded by the RPC timeout; 503
 * `chain_unavailable` with the failure kept as ../../chain/rpc-failure.ts keeps it).
 * Does not defend: what the message says (the signer decodes it and signs only the x402 exact shape), nor a
 * lying RPC (a wrong blockhash only makes the transaction fail to land).
 */
import { createHash } from 'node:crypto';
import {
  getBase64Decoder,
  getBase64Encoder,
  getTransactionDecoder,
  type Address,
  type SignatureBytes,
  type SignatureDictionary,
  type TransactionPartialSigner,
} from '@solana/kit';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { LRUCache } from 'lru-cache';
import { rpcFailure } from '../../chain/rpc-failure.js';
import type { AppConfig } from '../../config/app-config.js';
import { AppError } from '../../errors/app-error.js';
import { RecentBlockhash, type BlockhashSource } from './recent-blockhash.js';

/** The wallets whose client (and the mint it read) is kept; past it the least recently used is dropped. */
const MAX_CLIENTS = 10_000;

const base64Bytes = getBase64Encoder();
const base64Text = getBase64Decoder();
const transactionDecoder = getTransactionDecoder();

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

export interface ExactMessageOptions {
  /** The Solana RPC (TREASURY_SOLANA_RPC_URL) and its timeout. */
  url: string;
  timeoutMs: number;
  /** How long a blockhash read is reused (TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS; 0: a read per payment). */
  blockhashMaxAgeMs: number;
  /** Told where each payment's blockhash came from (./recent-blockhash.ts). */
  countBlockhash?: (source: BlockhashSource) => void;
}

/** What of the API's configuration the builder is made from. */
export type SolanaMessageConfig = Pick<AppConfig, 'solanaRpcUrl' | 'rpcTimeoutMs' | 'solanaBlockhashMaxAgeMs'>;

/** The builder's options from the API's configuration; undefined when no Solana RPC is configured. */
export function exactMessageOptions(config: SolanaMessageConfig): ExactMessageOptions | undefined {
  const { solanaRpcUrl: url, rpcTimeoutMs: timeoutMs, solanaBlockhashMaxAgeMs: blockhashMaxAgeMs } = config;
  return url === undefined ? undefined : { url, timeoutMs, blockhashMaxAgeMs };
}

export class ExactMessageBuilder {
  private readonly blockhash: RecentBlockhash;
  private readonly clients = new LRUCache<string, ExactSvmScheme>({ max: MAX_CLIENTS });

  constructor(private readonly options: ExactMessageOptions) {
    this.blockhash = new RecentBlockhash({
      url: options.url,
      timeoutMs: options.timeoutMs,
      maxAgeMs: options.blockhashMaxAgeMs,
      ...(options.countBlockhash ? { count: options.countBlockhash } : {}),
    });
  }

  async build(wallet: string, request: SolanaExactRequest): Promise<SolanaExactMessage> {
    const { memo, feePayer, ...rest } = request;
    let payload: { payload: Record<string, unknown> };
    try {
      payload = await withTimeout(
        this.blockhash.get().then(({ blockhash, lastValidBlockHeight }) =>
          this.client(wallet).createPaymentPayload(2, {
            scheme: 'exact',
            ...rest,
            extra: {
              feePayer,
              ...(memo === undefined ? {} : { memo }),
              recentBlockhash: blockhash,
              lastValidBlockHeight,
            },
          } as never),
        ),
        this.options.timeoutMs,
      );
    } catch (err) {
      throw new AppError('chain_unavailable', { fields: { network: request.network }, cause: rpcFailure(err) });
    }
    const transaction = payload.payload['transaction'];
    if (typeof transaction !== 'string')
      throw new AppError('internal_error', { message: 'The payment message was not built.' });
    const messageBytes = new Uint8Array(transactionDecoder.decode(base64Bytes.encode(transaction)).messageBytes);
    return {
      message: base64Text.decode(messageBytes),
      messageHash: `0x${createHash('sha256').update(messageBytes).digest('hex')}`,
    };
  }

  /** The official client for `wallet`, kept (with the mint it read) between payments. */
  private client(wallet: string): ExactSvmScheme {
    let client = this.clients.get(wallet);
    if (!client) {
      client = new ExactSvmScheme(placeholderSigner(wallet), { rpcUrl: this.options.url });
      this.clients.set(wallet, client);
    }
    return client;
  }
}

/** A signer for `wallet` that signs nothing: its placeholder signatures are never used (see above). */
function placeholderSigner(wallet: string): TransactionPartialSigner {
  return {
    address: wallet as Address,
    signTransactions: (transactions) =>
      Promise.resolve(
        transactions.map(() => ({ [wallet]: new Uint8Array(64) as SignatureBytes }) as SignatureDictionary),
      ),
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
