/**
 * The ledger verifier's Solana side (./ledger-verifier.ts): which Solana rows can be checked, and the check of
 * one row — its signature read from TREASURY_SOLANA_RPC_URL (../../chain/solana-transaction-reader.ts) and
 * judged by ../../chain/solana-ledger-transfer.ts against the network's USDC mint (`@x402/svm`'s table) and the
 * associated token accounts of the seller's proven Solana pay-to addresses.
 *
 * The endpoint serves one cluster: its genesis hash (read once, `getGenesisHash`) names the CAIP-2 network it
 * answers for, and a row of another Solana network waits (`rpc_not_configured`) instead of being judged on the
 * wrong cluster.
 * Defends against: a devnet payment counted as mainnet revenue (and the reverse); a seller's transfer to itself
 * counted as revenue (`self_payment`); a row naming a transaction by another of its signatures than its id. Does not defend against: a lying RPC endpoint.
 */
import { SOLANA_DEVNET_CAIP2, SOLANA_MAINNET_CAIP2, getUsdcAddress } from '@x402/svm';
import { z } from 'zod';
import { verifySolanaLedgerTransfer } from '../../chain/solana-ledger-transfer.js';
import { keptTokenAccounts } from '../../chain/kept-token-accounts.js';
import { readSolanaTransaction, type SolanaTransactionRead } from '../../chain/solana-transaction-reader.js';
import type { LedgerTransferVerdict } from '../../chain/verify-ledger-transfer.js';

/** The Solana networks the ledger checks rows of (mainnet and devnet, as the chain registry serves them). */
const LEDGER_SOLANA_NETWORKS: readonly string[] = [SOLANA_MAINNET_CAIP2, SOLANA_DEVNET_CAIP2];

export type SolanaCheck =
  LedgerTransferVerdict | { kind: 'not_found' } | { kind: 'unavailable'; cause: string } | { kind: 'other_cluster' };

export interface SolanaLedgerCheckOptions {
  rpcUrl: string | undefined;
  timeoutMs: number;
  /** Test seam: how a transaction is read. */
  read?: typeof readSolanaTransaction;
}

export class SolanaLedgerCheck {
  private cluster: Promise<string | undefined> | undefined;

  constructor(private readonly options: SolanaLedgerCheckOptions) {}

  /** Why a row of `network` cannot be checked, if it cannot. */
  unreachableReason(network: string): 'network_not_supported' | 'rpc_not_configured' | undefined {
    if (!LEDGER_SOLANA_NETWORKS.includes(network)) return 'network_not_supported';
    return this.options.rpcUrl === undefined ? 'rpc_not_configured' : undefined;
  }

  /**
   * Checks a row of a reachable network against the seller's proven Solana pay-to addresses; a transfer from an
   * account one of `ownAddresses` owns (the seller's own) is `self_payment`.
   */
  async check(
    row: { network: string; tx_hash: string; payer: string; amount_micro: string | number },
    payTo: readonly string[],
    ownAddresses: readonly string[],
  ): Promise<SolanaCheck> {
    const url = this.options.rpcUrl!;
    const cluster = await this.clusterOf(url);
    if (cluster === undefined) return { kind: 'unavailable', cause: 'getGenesisHash failed' };
    if (cluster !== row.network) return { kind: 'other_cluster' };
    const mint = getUsdcAddress(row.network as `${string}:${string}`);
    const destinations = (await Promise.all(payTo.map((owner) => keptTokenAccounts(owner, mint)))).flat();
    const read: SolanaTransactionRead = await (this.options.read ?? readSolanaTransaction)(
      url,
      row.tx_hash,
      this.options.timeoutMs,
    );
    if (read.kind !== 'found') return read;
    // The row names a transaction by its id (its first signature): an answer for another id (an endpoint that
    // also finds a transaction by a later signature) would let one transfer back two rows.
    if (read.tx.id !== undefined && read.tx.id !== row.tx_hash) return { kind: 'not_found' };
    return verifySolanaLedgerTransfer(read.tx, {
      mint,
      payer: row.payer,
      destinations,
      amountRaw: BigInt(row.amount_micro),
      ownAddresses,
    });
  }

  /** The CAIP-2 id of the endpoint's cluster (`solana:` + its genesis hash's first 32 characters); retried on failure. */
  private clusterOf(url: string): Promise<string | undefined> {
    this.cluster ??= genesisNetwork(url, this.options.timeoutMs).then((network) => {
      if (network === undefined) this.cluster = undefined;
      return network;
    });
    return this.cluster;
  }
}

async function genesisNetwork(url: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getGenesisHash', params: [] }),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const reply = z.object({ result: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/) }).safeParse(await res.json());
    return res.ok && reply.success ? `solana:${reply.data.result.slice(0, 32)}` : undefined;
  } catch {
    return undefined;
  }
}
