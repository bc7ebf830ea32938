/**
 * The offline Solana chain's state: one in-process litesvm (SPL Token, Token-2022, Memo, ATA and the
 * compute-budget program loaded) plus what a validator's RPC remembers and litesvm does not: a status and a
 * record per landed signature, the slot (one slot per landed transaction) and the block time.
 * Sends verify every signature; a simulation skips the check only when asked (`sigVerify:false`, what the
 * x402 facilitator does before co-signing as fee payer).
 * Defends against: unsigned or wrongly signed transactions landing (signature checking stays on for
 * sends), a replayed transaction landing twice (litesvm's AlreadyProcessed, answered as a send error).
 * Does not: produce blocks, forks or commitment levels (everything is final at once), nor keep more than
 * MAX_RECORDS transactions (the oldest are forgotten).
 */
import {
  getBase58Decoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
  type Transaction,
} from '@solana/kit';
import { FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from 'litesvm';
import { snapshotBalances, type BalanceSnapshot } from './svm-balance-snapshot.js';
import {
  invalidParams,
  RPC_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  RPC_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SolanaRpcError,
} from './solana-rpc-error.js';
import { isNotLanded, toRpcTransactionError, type RpcTransactionError } from './svm-transaction-errors.js';

const MAX_RECORDS = 10_000;
/** Blocks a blockhash stays valid on a validator (lastValidBlockHeight = slot + this). */
const BLOCKHASH_VALIDITY = 150n;

type LiteSvmTransaction = Parameters<LiteSVM['sendTransaction']>[0];

export interface TransactionRecord {
  signature: string;
  slot: bigint;
  blockTime: number;
  /** Undefined for an airdrop (litesvm's own transfer: a status, no transaction to show). */
  wire: Uint8Array | undefined;
  version: 0 | 'legacy';
  err: RpcTransactionError | null;
  logs: string[];
  computeUnits: bigint;
  pre: BalanceSnapshot;
  post: BalanceSnapshot;
}

export interface SimulationResult {
  err: RpcTransactionError | null;
  logs: string[];
  unitsConsumed: bigint;
}

function decodeWire(wire: Uint8Array): { tx: Transaction; accounts: Address[]; version: 0 | 'legacy' } {
  try {
    const tx = getTransactionDecoder().decode(wire);
    const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    const version = message.version === 'legacy' ? 'legacy' : 0;
    return { tx, accounts: [...message.staticAccounts], version };
  } catch {
    throw invalidParams('failed to deserialize the transaction');
  }
}

function firstSignature(tx: Transaction): string {
  const first = Object.values(tx.signatures)[0];
  if (!first) throw signatureVerificationFailure();
  return getBase58Decoder().decode(first);
}

function signatureVerificationFailure(): SolanaRpcError {
  return new SolanaRpcError(
    RPC_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
    'Transaction signature verification failure',
  );
}

function outcome(result: TransactionMetadata | FailedTransactionMetadata) {
  const failed = result instanceof FailedTransactionMetadata;
  const meta = failed ? result.meta() : result;
  return {
    err: failed ? toRpcTransactionError(result.err()) : null,
    logs: meta.logs(),
    units: meta.computeUnitsConsumed(),
  };
}

export class LocalSvm {
  readonly svm: LiteSVM = new LiteSVM();
  private readonly records = new Map<string, TransactionRecord>();

  get slot(): bigint {
    return this.svm.getClock().slot;
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: bigint } {
    return { blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: this.slot + BLOCKHASH_VALIDITY };
  }

  /** Runs `wire` without committing it; `sigVerify` false skips signature checks for this call only. */
  simulate(wire: Uint8Array, options: { sigVerify: boolean; replaceRecentBlockhash: boolean }): SimulationResult {
    const { tx } = decodeWire(wire);
    this.svm.withSigverify(options.sigVerify).withBlockhashCheck(!options.replaceRecentBlockhash);
    let result: ReturnType<LiteSVM['simulateTransaction']>;
    try {
      result = this.svm.simulateTransaction(tx as unknown as LiteSvmTransaction);
    } catch {
      throw signatureVerificationFailure(); // kit's "not fully signed" assertion
    } finally {
      this.svm.withSigverify(true).withBlockhashCheck(true);
    }
    const { err, logs, units } = outcome(result instanceof FailedTransactionMetadata ? result : result.meta());
    if (err === 'SignatureFailure') throw signatureVerificationFailure();
    return { err, logs, unitsConsumed: units };
  }

  /** Lands `wire` (signatures checked) and answers its signature; refuses what a cluster would drop. */
  send(wire: Uint8Array): string {
    const { tx, accounts, version } = decodeWire(wire);
    const signature = firstSignature(tx);
    const pre = snapshotBalances(this.svm, accounts);
    let result: TransactionMetadata | FailedTransactionMetadata;
    try {
      result = this.svm.sendTransaction(tx as unknown as LiteSvmTransaction);
    } catch {
      throw signatureVerificationFailure();
    }
    const { err, logs, units } = outcome(result);
    if (err === 'SignatureFailure') throw signatureVerificationFailure();
    if (err !== null && isNotLanded(err))
      throw new SolanaRpcError(
        RPC_SEND_TRANSACTION_PREFLIGHT_FAILURE,
        `Transaction simulation failed: ${JSON.stringify(err)}`,
        { err, logs },
      );
    const post = snapshotBalances(this.svm, accounts);
    this.remember({
      signature,
      slot: this.slot,
      blockTime: Math.floor(Date.now() / 1000),
      wire,
      version,
      err,
      logs,
      computeUnits: units,
      pre,
      post,
    });
    this.svm.warpToSlot(this.slot + 1n);
    return signature;
  }

  /** Sends `lamports` from litesvm's airdrop account to `address`; answers the transfer's signature. */
  airdrop(address: Address, lamports: bigint): string {
    const pre = snapshotBalances(this.svm, [address]);
    const result = this.svm.airdrop(address, lamports as Parameters<LiteSVM['airdrop']>[1]);
    if (result === null || result instanceof FailedTransactionMetadata)
      throw new SolanaRpcError(RPC_SEND_TRANSACTION_PREFLIGHT_FAILURE, 'airdrop failed');
    const signature = getBase58Decoder().decode(result.signature());
    const post = snapshotBalances(this.svm, [address]);
    const { logs, units } = outcome(result);
    this.remember({
      signature,
      slot: this.slot,
      blockTime: Math.floor(Date.now() / 1000),
      wire: undefined,
      version: 'legacy',
      err: null,
      logs,
      computeUnits: units,
      pre,
      post,
    });
    this.svm.warpToSlot(this.slot + 1n);
    return signature;
  }

  record(signature: string): TransactionRecord | undefined {
    return this.records.get(signature);
  }

  private remember(record: TransactionRecord): void {
    this.records.set(record.signature, record);
    if (this.records.size <= MAX_RECORDS) return;
    const oldest = this.records.keys().next().value;
    if (oldest !== undefined) this.records.delete(oldest);
  }
}
