/**
 * The local Solana RPC's methods over a LocalSvm: the ones the official x402 SVM client and facilitator
 * call (getLatestBlockhash, getAccountInfo, simulateTransaction, sendTransaction, getSignatureStatuses,
 * getSlot, getTokenAccountBalance) and what a wallet service needs besides (getBalance, getTransaction,
 * getHealth, getVersion, getGenesisHash), plus requestAirdrop (SOL only). Answers use the validator's
 * shapes: `{context:{slot}, value}` envelopes, u64 values as bigints (written as JSON numbers).
 * Defends against: params outside their schema (-32602), unknown methods (-32601).
 * Does not: answer `json`/`jsonParsed` encodings, subscriptions, or any method not listed here.
 */
import { address, getBase58Encoder, getBase64Encoder, getBase64Decoder, type Address } from '@solana/kit';
import { DEVNET_GENESIS_HASH, LOCAL_SOLANA_VERSION } from './solana-devnet.js';
import type { LocalSvm, TransactionRecord } from './local-svm.js';
import { invalidParams, RPC_SEND_TRANSACTION_PREFLIGHT_FAILURE, SolanaRpcError } from './solana-rpc-error.js';
import { paramsSchemas, type RpcMethodName, type RpcParams } from './solana-rpc-schemas.js';
import { mintDecimals, tokenAmount } from './svm-balance-snapshot.js';
import { decodeTokenAccount, TOKEN_PROGRAM } from './spl-token-layouts.js';

type Handlers = { [M in RpcMethodName]: (svm: LocalSvm, params: RpcParams<M>) => unknown };

function envelope(svm: LocalSvm, value: unknown): { context: { slot: bigint }; value: unknown } {
  return { context: { slot: svm.slot }, value };
}

/** A Solana packet's size: no transaction is larger. */
const MAX_TRANSACTION_BYTES = 1_232;

function wireBytes(encoded: string, encoding: 'base58' | 'base64'): Uint8Array {
  const bytes = decodeString(encoded, encoding);
  if (bytes.length > MAX_TRANSACTION_BYTES)
    throw invalidParams(`transaction larger than ${MAX_TRANSACTION_BYTES} bytes`);
  return bytes;
}

function decodeString(encoded: string, encoding: 'base58' | 'base64'): Uint8Array {
  try {
    return new Uint8Array(
      encoding === 'base64' ? getBase64Encoder().encode(encoded) : getBase58Encoder().encode(encoded),
    );
  } catch {
    throw invalidParams(`transaction is not valid ${encoding}`);
  }
}

function accountInfo(svm: LocalSvm, at: Address) {
  const account = svm.svm.getAccount(at);
  if (!account.exists) return null;
  return {
    data: [getBase64Decoder().decode(account.data), 'base64'],
    executable: account.executable,
    lamports: BigInt(account.lamports),
    owner: account.programAddress,
    rentEpoch: 18_446_744_073_709_551_615n,
    space: BigInt(account.data.length),
  };
}

function tokenAccountBalance(svm: LocalSvm, at: Address) {
  const account = svm.svm.getAccount(at);
  const state =
    account.exists && account.programAddress === TOKEN_PROGRAM ? decodeTokenAccount(account.data) : undefined;
  const decimals = state === undefined ? undefined : mintDecimals(svm.svm, state.mint);
  if (state === undefined || decimals === undefined) throw invalidParams('not a Token account');
  return tokenAmount(state.amount, decimals);
}

function signatureStatus(svm: LocalSvm, signature: string) {
  const record = svm.record(signature);
  if (!record) return null;
  return {
    slot: record.slot,
    confirmations: null,
    err: record.err,
    status: record.err === null ? { Ok: null } : { Err: record.err },
    confirmationStatus: 'finalized',
  };
}

function transactionAnswer(record: TransactionRecord) {
  if (record.wire === undefined) return null;
  return {
    slot: record.slot,
    blockTime: BigInt(record.blockTime),
    version: record.version,
    transaction: [getBase64Decoder().decode(record.wire), 'base64'],
    meta: {
      err: record.err,
      status: record.err === null ? { Ok: null } : { Err: record.err },
      fee: record.fee,
      logMessages: record.logs,
      computeUnitsConsumed: record.computeUnits,
      preBalances: record.pre.lamports,
      postBalances: record.post.lamports,
      preTokenBalances: record.pre.tokens,
      postTokenBalances: record.post.tokens,
      innerInstructions: [],
      loadedAddresses: { writable: [], readonly: [] },
      rewards: [],
    },
  };
}

function preflight(svm: LocalSvm, wire: Uint8Array): void {
  const simulated = svm.simulate(wire, { sigVerify: true, replaceRecentBlockhash: false });
  if (simulated.err !== null)
    throw new SolanaRpcError(
      RPC_SEND_TRANSACTION_PREFLIGHT_FAILURE,
      `Transaction simulation failed: ${JSON.stringify(simulated.err)}`,
      { err: simulated.err, logs: simulated.logs, unitsConsumed: simulated.unitsConsumed },
    );
}

const handlers: Handlers = {
  getHealth: () => 'ok',
  getVersion: () => LOCAL_SOLANA_VERSION,
  getGenesisHash: () => DEVNET_GENESIS_HASH,
  getSlot: (svm) => svm.slot,
  getLatestBlockhash: (svm) => envelope(svm, svm.latestBlockhash()),
  getAccountInfo: (svm, [account]) => envelope(svm, accountInfo(svm, address(account))),
  getBalance: (svm, [account]) => envelope(svm, svm.svm.getBalance(address(account)) ?? 0n),
  getTokenAccountBalance: (svm, [account]) => envelope(svm, tokenAccountBalance(svm, address(account))),
  simulateTransaction: (svm, [encoded, config]) => {
    const result = svm.simulate(wireBytes(encoded, config.encoding), config);
    return envelope(svm, { ...result, accounts: null, returnData: null, innerInstructions: null });
  },
  sendTransaction: (svm, [encoded, config]) => {
    const wire = wireBytes(encoded, config.encoding);
    if (!config.skipPreflight) preflight(svm, wire);
    return svm.send(wire);
  },
  getSignatureStatuses: (svm, [signatures]) =>
    envelope(
      svm,
      signatures.map((s) => signatureStatus(svm, s)),
    ),
  getTransaction: (svm, [signature]) => {
    const record = svm.record(signature);
    return record ? transactionAnswer(record) : null;
  },
  requestAirdrop: (svm, [account, lamports]) => svm.airdrop(address(account), BigInt(lamports)),
};

/** Runs one method: params checked against its schema, then the handler. */
export function callRpcMethod(svm: LocalSvm, method: RpcMethodName, rawParams: unknown[]): unknown {
  const parsed = paramsSchemas[method].safeParse(rawParams);
  if (!parsed.success) throw invalidParams(parsed.error.issues.map((issue) => issue.message).join('; '));
  const handler = handlers[method] as (svm: LocalSvm, params: unknown) => unknown;
  return handler(svm, parsed.data);
}
