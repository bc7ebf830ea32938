/**
 * The transaction message of a Solana x402 `exact` payment, composed as the official client (`@x402/svm`'s
 * ExactSvmScheme) composes it, from the same instruction builders and constants: SetComputeUnitLimit,
 * SetComputeUnitPrice, TransferChecked of `amount` from ATA(wallet, mint) to ATA(payTo, mint) under the mint's
 * token program with the wallet as authority, and a Memo (`extra.memo`, or 16 random bytes as hex), fee payer
 * `extra.feePayer`, on a blockhash read from the deployment's RPC (./recent-blockhash.ts). Nothing is signed
 * here: the wallet's key signs the message later, after the payment is decided and recorded (../pay-service.ts).
 *
 * What the official client does again for every payment is done once: the mint's token program and decimals
 * are read once per mint (a failed read is not kept), and the two associated token accounts are kept
 * (../../chain/kept-token-accounts.ts) — each derivation is about 0.8 ms of CPU in JavaScript, two a payment,
 * a third to a half of a Solana payment's CPU in the API when the client derived them (docs/performance.md, "A
 * Solana payment's message without its two derivations"); and the compiled message is written with the
 * signer's codec (../../../../signer/protocol/solana-message-codec.ts), kit's layout without kit's BigInt base58,
 * a third of the API's CPU a Solana payment when kit wrote it. test/integration/api/solana-exact-message.test.ts
 * holds the message byte for byte to the official client's for the same payment, so a change of shape in a
 * new release of the client fails there, not on chain.
 *
 * Defends: a message of another shape than the one sellers and facilitators expect (the official builders,
 * held to the official client's output); a seller's `recentBlockhash` in `extra` (only feePayer and memo are
 * passed on: the blockhash is the deployment's RPC's); a mint owned by any program but SPL Token or Token-2022
 * (`chain_unavailable`, as the official client refuses it); a slow RPC holding the request (the mint's read
 * and the blockhash's are bounded by the RPC timeout; 503 `chain_unavailable` with the failure kept as
 * ../../chain/rpc-failure.ts keeps it).
 * Does not defend: what the message says (the signer decodes it and signs only the x402 exact shape), nor a
 * lying RPC (a wrong blockhash or mint only makes the transaction fail to land).
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  getSetComputeUnitLimitInstruction,
  setTransactionMessageComputeUnitPrice,
} from '@solana-program/compute-budget';
import { fetchMint, getTransferCheckedInstruction } from '@solana-program/token-2022';
import {
  appendTransactionMessageInstructions,
  compileTransactionMessage,
  createSolanaRpc,
  createTransactionMessage,
  getBase64Decoder,
  pipe,
  prependTransactionMessageInstruction,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Rpc,
  type SolanaRpcApi,
  type TransactionPartialSigner,
} from '@solana/kit';
import {
  DEFAULT_COMPUTE_UNIT_LIMIT,
  DEFAULT_COMPUTE_UNIT_PRICE_MICROLAMPORTS,
  MAX_MEMO_BYTES,
  MEMO_PROGRAM_ADDRESS,
} from '@x402/svm';
import { LRUCache } from 'lru-cache';
import { solanaMessageEncoder } from '../../../../signer/protocol/signer-protocol.js';
import { keptTokenAccount } from '../../chain/kept-token-accounts.js';
import { rpcFailure } from '../../chain/rpc-failure.js';
import type { AppConfig } from '../../config/app-config.js';
import { AppError } from '../../errors/app-error.js';
import { TOKEN_PROGRAMS } from '../../../x402/seller/svm-payment.js';
import { RecentBlockhash, type BlockhashSource } from './recent-blockhash.js';

/** Mints whose token program and decimals are kept (a payment's mint is the chain's USDC: one per chain). */
const MAX_MINTS = 64;

const base64Text = getBase64Decoder();

/** What a payment's TransferChecked needs of its mint. */
interface MintMetadata {
  programAddress: Address;
  decimals: number;
}

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
  private readonly rpc: Rpc<SolanaRpcApi>;
  private readonly mints = new LRUCache<string, Promise<MintMetadata>>({ max: MAX_MINTS });

  constructor(private readonly options: ExactMessageOptions) {
    this.rpc = createSolanaRpc(options.url);
    this.blockhash = new RecentBlockhash({
      url: options.url,
      timeoutMs: options.timeoutMs,
      maxAgeMs: options.blockhashMaxAgeMs,
      ...(options.countBlockhash ? { count: options.countBlockhash } : {}),
    });
  }

  async build(wallet: string, request: SolanaExactRequest): Promise<SolanaExactMessage> {
    let messageBytes: Uint8Array;
    try {
      messageBytes = await withTimeout(this.compose(wallet, request), this.options.timeoutMs);
    } catch (err) {
      throw new AppError('chain_unavailable', { fields: { network: request.network }, cause: rpcFailure(err) });
    }
    return {
      message: base64Text.decode(messageBytes),
      messageHash: `0x${createHash('sha256').update(messageBytes).digest('hex')}`,
    };
  }

  /** The message's bytes, as the official client's `createPaymentPayload` composes them. */
  private async compose(wallet: string, request: SolanaExactRequest): Promise<Uint8Array> {
    const [mint, { blockhash, lastValidBlockHeight }] = await Promise.all([
      this.mint(request.network, request.asset),
      this.blockhash.get(),
    ]);
    const [source, destination] = await Promise.all([
      keptTokenAccount(wallet, request.asset, mint.programAddress),
      keptTokenAccount(request.payTo, request.asset, mint.programAddress),
    ]);
    const transfer = getTransferCheckedInstruction(
      {
        source,
        mint: request.asset as Address,
        destination,
        authority: authority(wallet),
        amount: BigInt(request.amount),
        decimals: mint.decimals,
      },
      { programAddress: mint.programAddress },
    );
    const memo = {
      programAddress: MEMO_PROGRAM_ADDRESS as Address,
      accounts: [],
      data: memoBytes(request.memo),
    };
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageComputeUnitPrice(DEFAULT_COMPUTE_UNIT_PRICE_MICROLAMPORTS, m),
      (m) => setTransactionMessageFeePayer(request.feePayer as Address, m),
      (m) =>
        prependTransactionMessageInstruction(
          getSetComputeUnitLimitInstruction({ units: DEFAULT_COMPUTE_UNIT_LIMIT }),
          m,
        ),
      (m) => appendTransactionMessageInstructions([transfer, memo], m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: blockhash as Blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) },
          m,
        ),
    );
    // Kit's compiler orders the accounts; the bytes are kit's layout, written without its BigInt base58.
    return new Uint8Array(solanaMessageEncoder.encode(compileTransactionMessage(message)));
  }

  /**
   * The mint's token program and decimals, read once: payments asking meanwhile share the read, which is aborted after
   * the RPC timeout; a failed read is not kept (the next payment reads again).
   */
  private async mint(network: string, asset: string): Promise<MintMetadata> {
    const key = `${network} ${asset}`;
    let read = this.mints.get(key);
    if (!read) {
      read = fetchMint(this.rpc, asset as Address, { abortSignal: AbortSignal.timeout(this.options.timeoutMs) }).then(
        (account) => {
          if (!TOKEN_PROGRAMS.includes(account.programAddress))
            throw new Error('the asset was not created by a known token program');
          return { programAddress: account.programAddress, decimals: account.data.decimals };
        },
      );
      this.mints.set(key, read);
      read.catch(() => {
        if (this.mints.get(key) === read) this.mints.delete(key);
      });
    }
    return read;
  }
}

/**
 * The memo's bytes: the seller's `extra.memo`, or when it is absent or empty, 16 random bytes as hex (as the official
 * client makes it: an empty memo is no memo).
 */
function memoBytes(memo: string | undefined): Uint8Array {
  const bytes = new TextEncoder().encode(memo === undefined || memo === '' ? randomBytes(16).toString('hex') : memo);
  if (bytes.byteLength > MAX_MEMO_BYTES) throw new Error(`extra.memo exceeds maximum ${MAX_MEMO_BYTES} bytes`);
  return bytes;
}

/**
 * The wallet as the transfer's authority: a signer by shape, so the account is marked as one in the message,
 * that signs nothing (the message is only compiled here; the wallet's key signs it in the signer).
 */
function authority(wallet: string): TransactionPartialSigner {
  return {
    address: wallet as Address,
    signTransactions: () => Promise.reject(new Error('the message builder signs nothing')),
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
