/**
 * Reads a Solana transaction for the ledger check (./solana-ledger-transfer.ts) from the configured JSON-RPC
 * endpoint: `getSignatureStatuses` (with history: whether it landed, and how firmly) and `getTransaction`
 * (`encoding: "base64"`, `commitment: "confirmed"`, version 0 allowed): the wire transaction, decoded with
 * @solana/kit into its account keys and instructions, and `meta` (`err`, pre/post token balances, the lookup
 * tables' loaded addresses), with the message's SHA-256 and the transaction's id (its first signature, the fee
 * payer's) for the settlement check (./verify-solana-settlement.ts). Every reply is schema-checked; a reply larger than 1 MiB, a time-out, a non-2xx or
 * a JSON-RPC error is `unavailable` (the row is retried), an unknown signature `not_found`.
 *
 * Defends against: a confused or hostile RPC reply crashing the verifier or being read as a payment (only a
 * schema-valid reply whose transaction decodes is `found`); one slow RPC holding the worker (time-out).
 * Does not defend against: a lying RPC endpoint (it is trusted, as for balances).
 */
import { createHash } from 'node:crypto';
import {
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
} from '@solana/kit';
import { z } from 'zod';
import { isSolanaSignature } from '../../shared/ledger-report-schema.js';
import type { LandedSolanaTransaction, SolanaTokenBalance } from './solana-ledger-transfer.js';

const MAX_REPLY_BYTES = 1024 * 1024;

const tokenBalance = z
  .object({
    accountIndex: z.number().int().min(0).max(255),
    mint: z.string().max(44),
    owner: z.string().max(44).optional(),
    uiTokenAmount: z.object({ amount: z.string().regex(/^[0-9]{1,20}$/) }).loose(),
  })
  .loose();

const transactionReply = z
  .object({
    transaction: z.tuple([z.string().max(4096), z.literal('base64')]),
    meta: z
      .object({
        err: z.unknown(),
        preTokenBalances: z.array(tokenBalance).max(256).nullish(),
        postTokenBalances: z.array(tokenBalance).max(256).nullish(),
        loadedAddresses: z
          .object({ writable: z.array(z.string().max(44)).max(256), readonly: z.array(z.string().max(44)).max(256) })
          .nullish(),
      })
      .loose(),
  })
  .loose()
  .nullable();

const statusReply = z
  .object({
    value: z
      .array(
        z
          .object({
            confirmations: z.number().int().min(0).nullish(),
            confirmationStatus: z.enum(['processed', 'confirmed', 'finalized']).nullish(),
          })
          .loose()
          .nullable(),
      )
      .length(1),
  })
  .loose();

/** A transaction as read: what the ledger check reads, and what names it (for the settlement check). */
export interface ReadSolanaTransaction extends LandedSolanaTransaction {
  /** SHA-256 of the message bytes, 0x + 64 hex; undefined while not confirmed (the message is not read yet). */
  messageHash: string | undefined;
  /** The transaction's id, its first signature (the fee payer's), base58; undefined while not confirmed. */
  id: string | undefined;
}

export type SolanaTransactionRead =
  { kind: 'found'; tx: ReadSolanaTransaction } | { kind: 'not_found' } | { kind: 'unavailable'; cause: string };

class RpcUnavailable extends Error {}

async function call(url: string, method: string, params: unknown[], timeoutMs: number): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new RpcUnavailable(`${method}: ${err instanceof Error ? err.name : 'failed'}`);
  }
  const text = await res.text().catch(() => '');
  if (!res.ok || text.length > MAX_REPLY_BYTES) throw new RpcUnavailable(`${method}: HTTP ${res.status}`);
  let body: { result?: unknown; error?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new RpcUnavailable(`${method}: not JSON`);
  }
  if (body.error !== undefined || !('result' in body)) throw new RpcUnavailable(`${method}: JSON-RPC error`);
  return body.result;
}

const balances = (list: z.infer<typeof tokenBalance>[] | null | undefined): SolanaTokenBalance[] =>
  (list ?? []).map((b) => ({
    accountIndex: b.accountIndex,
    mint: b.mint,
    owner: b.owner,
    amount: BigInt(b.uiTokenAmount.amount),
  }));

/** Decodes the reply's wire transaction into the account keys and instructions the check reads. */
function landed(
  reply: NonNullable<z.infer<typeof transactionReply>>,
  status: NonNullable<z.infer<typeof statusReply>['value'][0]>,
): ReadSolanaTransaction {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(reply.transaction[0]));
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const loaded = reply.meta.loadedAddresses;
  const first = message.staticAccounts[0] === undefined ? undefined : tx.signatures[message.staticAccounts[0]];
  return {
    messageHash: `0x${createHash('sha256').update(new Uint8Array(tx.messageBytes)).digest('hex')}`,
    id: first ? getBase58Decoder().decode(first) : undefined,
    confirmationStatus: status.confirmationStatus ?? undefined,
    confirmations: status.confirmations ?? undefined,
    failed: reply.meta.err !== null && reply.meta.err !== undefined,
    accountKeys: [...message.staticAccounts, ...(loaded?.writable ?? []), ...(loaded?.readonly ?? [])],
    instructions: message.instructions.map((ix) => ({
      programIndex: ix.programAddressIndex,
      accounts: [...(ix.accountIndices ?? [])],
      data: new Uint8Array(ix.data ?? []),
    })),
    preTokenBalances: balances(reply.meta.preTokenBalances),
    postTokenBalances: balances(reply.meta.postTokenBalances),
  };
}

function unconfirmed(confirmations: number | undefined): ReadSolanaTransaction {
  const none = {
    messageHash: undefined,
    id: undefined,
    failed: false,
    accountKeys: [],
    instructions: [],
    preTokenBalances: [],
    postTokenBalances: [],
  };
  return { confirmationStatus: 'processed', confirmations, ...none };
}

/** Reads `signature` from the RPC at `url` (see the header). */
export async function readSolanaTransaction(
  url: string,
  signature: string,
  timeoutMs: number,
): Promise<SolanaTransactionRead> {
  if (!isSolanaSignature(signature)) return { kind: 'not_found' };
  try {
    const statuses = statusReply.safeParse(
      await call(url, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }], timeoutMs),
    );
    if (!statuses.success) return { kind: 'unavailable', cause: 'malformed getSignatureStatuses reply' };
    const status = statuses.data.value[0];
    if (!status) return { kind: 'not_found' };
    // Seen but not confirmed yet: getTransaction (confirmed) would not know it; the check answers pending.
    if (status.confirmationStatus !== 'confirmed' && status.confirmationStatus !== 'finalized')
      return { kind: 'found', tx: unconfirmed(status.confirmations ?? undefined) };
    const options = { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 0 };
    const reply = transactionReply.safeParse(await call(url, 'getTransaction', [signature, options], timeoutMs));
    if (!reply.success) return { kind: 'unavailable', cause: 'malformed getTransaction reply' };
    if (reply.data === null) return { kind: 'not_found' };
    return { kind: 'found', tx: landed(reply.data, status) };
  } catch (err) {
    if (err instanceof RpcUnavailable) return { kind: 'unavailable', cause: err.message };
    return { kind: 'unavailable', cause: 'undecodable transaction' };
  }
}
