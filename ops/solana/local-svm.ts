/**
 * The offline Solana chain's state: one in-process litesvm (SPL Token, Token-2022, Memo, ATA and the
 * compute-budget program loaded) plus what a validator's RPC remembers and litesvm does not: the slot (one
 * per landed transaction, each with a new blockhash), the recent-blockhash window and status cache
 * (recent-blockhashes.ts), and a record per landed signature with its balances before and after.
 * Sends verify every signature; a simulation skips the check only when asked (`sigVerify:false`, what the
 * x402 facilitator does before co-signing as fee payer).
 * Defends against: unsigned or wrongly signed transactions landing (signature checking stays on for
 * sends), a transaction landing twice (AlreadyProcessed while its blockhash is recent, BlockhashNotFound
 * after), transactions on a stale blockhash.
 * Does not: produce blocks, forks or commitment levels (everything is final at once), nor keep more than
 * MAX_RECORDS transaction records (the oldest are forgotten; their replay stays refused by the window).
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
import { RecentBlockhashes } from './recent-blockhashes.js';
import { allSignaturesValid } from './svm-signatures.js';
import { LAMPORTS_PER_SIGNATURE, transactionFee } from './svm-transaction-fee.js';
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
  /** Lamports charged to the fee payer (svm-transaction-fee.ts). */
  fee: bigint;
  pre: BalanceSnapshot;
  post: BalanceSnapshot;
}

export interface SimulationResult {
  err: RpcTransactionError | null;
  logs: string[];
  unitsConsumed: bigint;
}

interface DecodedWire {
  tx: Transaction;
  accounts: Address[];
  version: 0 | 'legacy';
  blockhash: string;
}

function decodeWire(wire: Uint8Array): DecodedWire {
  try {
    const tx = getTransactionDecoder().decode(wire);
    const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    const version = message.version === 'legacy' ? 'legacy' : 0;
    return { tx, accounts: [...message.staticAccounts], version, blockhash: message.lifetimeToken };
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

function dropped(err: RpcTransactionError, logs: string[] = []): SolanaRpcError {
  const message = `Transaction simulation failed: ${JSON.stringify(err)}`;
  return new SolanaRpcError(RPC_SEND_TRANSACTION_PREFLIGHT_FAILURE, message, { err, logs });
}

export class LocalSvm {
  /** litesvm's own blockhash check is off: the window below is the check (litesvm knows one blockhash only). */
  readonly svm: LiteSVM = new LiteSVM().withBlockhashCheck(false);
  private readonly records = new Map<string, TransactionRecord>();
  private readonly recent = new RecentBlockhashes(this.svm.latestBlockhash());

  get slot(): bigint {
    return this.svm.getClock().slot;
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: bigint } {
    return { blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: this.slot + BLOCKHASH_VALIDITY };
  }

  /** Runs `wire` without committing it; `sigVerify` false skips signature checks for this call only. */
  simulate(wire: Uint8Array, options: { sigVerify: boolean; replaceRecentBlockhash: boolean }): SimulationResult {
    const { tx, blockhash } = decodeWire(wire);
    if (!options.replaceRecentBlockhash && !this.recent.isRecent(blockhash))
      return { err: 'BlockhashNotFound', logs: [], unitsConsumed: 0n };
    this.svm.withSigverify(options.sigVerify);
    let result: ReturnType<LiteSVM['simulateTransaction']>;
    try {
      result = this.svm.simulateTransaction(tx as unknown as LiteSvmTransaction);
    } catch {
      throw signatureVerificationFailure(); // kit's "not fully signed" assertion
    } finally {
      this.svm.withSigverify(true);
    }
    const { err, logs, units } = outcome(result instanceof FailedTransactionMetadata ? result : result.meta());
    if (err === 'SignatureFailure') throw signatureVerificationFailure();
    return { err, logs, unitsConsumed: units };
  }

  /** Lands `wire` (signatures checked) and answers its signature; refuses what a cluster would drop. */
  send(wire: Uint8Array): string {
    const { tx, accounts, version, blockhash } = decodeWire(wire);
    if (!allSignaturesValid(tx)) throw signatureVerificationFailure();
    const signature = firstSignature(tx);
    if (!this.recent.isRecent(blockhash)) throw dropped('BlockhashNotFound');
    if (this.recent.hasLanded(signature)) throw dropped('AlreadyProcessed');
    const pre = snapshotBalances(this.svm, accounts);
    let result: TransactionMetadata | FailedTransactionMetadata;
    try {
      result = this.svm.sendTransaction(tx as unknown as LiteSvmTransaction);
    } catch {
      throw signatureVerificationFailure();
    }
    const { err, logs, units } = outcome(result);
    if (err === 'SignatureFailure') throw signatureVerificationFailure();
    if (err !== null && isNotLanded(err)) throw dropped(err, logs);
    const post = snapshotBalances(this.svm, accounts);
    const fee = transactionFee(tx.messageBytes);
    this.land(blockhash, { signature, wire, version, err, logs, computeUnits: units, fee, pre, post });
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
    const record = { signature, wire: undefined, version: 'legacy' as const, err: null, logs, computeUnits: units };
    // litesvm's airdrop account pays one signature's fee.
    this.land(this.svm.latestBlockhash(), { ...record, fee: LAMPORTS_PER_SIGNATURE, pre, post });
    return signature;
  }

  record(signature: string): TransactionRecord | undefined {
    return this.records.get(signature);
  }

  /** Records a landed transaction in this slot, then opens the next slot with a new blockhash. */
  private land(blockhash: string, landed: Omit<TransactionRecord, 'slot' | 'blockTime'>): void {
    this.recent.record(blockhash, landed.signature);
    this.records.set(landed.signature, { ...landed, slot: this.slot, blockTime: Math.floor(Date.now() / 1000) });
    if (this.records.size > MAX_RECORDS) {
      const oldest = this.records.keys().next().value;
      if (oldest !== undefined) this.records.delete(oldest);
    }
    this.svm.warpToSlot(this.slot + 1n);
    this.svm.expireBlockhash();
    this.recent.push(this.svm.latestBlockhash());
  }
}
