/**
 * USDC balances read on-chain on every call: viem `balanceOf` on an EVM chain, the wallet's associated token
 * account on a Solana one (./solana-token-reader.ts). When the RPC fails, the last figure read
 * for that (network, token, address) is served with `stale: true` and the time it was read, until the next
 * successful read; with no earlier figure the read fails with `chain_unavailable` (503). Each fresh figure is
 * kept in this process and in PostgreSQL (`balance_readings`, only ever moved forward in time), so the
 * fallback survives a restart and every API process serves the newest one any of them read.
 *
 * `usdcAllowance` reads what a spender (Permit2, for x402 `upto`) may move from an address, and
 * `minedTransaction` a transaction with its receipt (to verify a settlement); neither is ever served stale —
 * an unreachable RPC is `chain_unavailable`.
 *
 * Every read is made for a tenant (the first argument of each method: a Treasury or platform account id) once it
 * has a place in ./chain-read-admission.ts: one tenant's reads cannot take the RPC from the others. The RPC's failure
 * is settled inside the admitted read (as `chain_unavailable`, or a stale figure), so a read refused there fails
 * with the refusal and is never served stale (nothing was read).
 *
 * Defends: a slow or dead RPC holding requests (short timeout, no retries inside a request).
 * An RPC failure travels on only as `rpcFailure` (./rpc-failure.ts): the endpoint's path, query and
 * credentials (a provider key) are never in a cause, a log line or an answer.
 *
 * Does not defend: a lying RPC — the figure is whatever the configured endpoint answers. A figure that could
 * not be stored (PostgreSQL unreachable) is kept in this process only; the read itself still answers.
 */
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import {
  createPublicClient,
  erc20Abi,
  http,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Hash,
  type Hex,
  type PublicClient,
} from 'viem';
const EIP2612_NONCES_ABI = [
  {
    type: 'function',
    name: 'nonces',
    stateMutability: 'view',
    inputs: [{ name: 'owner', type: 'address' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
] as const;

import { formatUsd } from '../../../policy/money.js';
import type { AppConfig } from '../config/app-config.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { AnyChainInfo, ChainInfo } from '../../shared/chain-registry.js';
import type { SettlementTransaction } from './verify-upto-settlement.js';
import { rpcFailure } from './rpc-failure.js';
import { SolanaTokenReader } from './solana-token-reader.js';
import type { ChainReads } from './chain-read-admission.js';

/** A mined transaction as the settlement and ledger checks read it, with its depth. */
export interface MinedTransaction extends SettlementTransaction {
  logs: ReadonlyArray<{ address: string; topics: readonly Hex[]; data: Hex; logIndex: number }>;
  blockNumber: bigint;
  /** Blocks from the transaction's own to the head, its own included (1 right after it was mined). */
  confirmations: number;
}

export interface BalanceReading {
  network: string;
  asset: string;
  address: string;
  balance_raw: string;
  balance_usd: string;
  stale: boolean;
  /** When the figure was read from the chain (now for a fresh read). */
  updated_at: string;
}

const MAX_CACHED = 100_000;

/** What a reader is built with besides the configuration: where figures are kept, metrics, admission, clock. */
export interface BalanceReaderDeps {
  knex: Knex;
  rpcUrls: Readonly<Record<string, string>>;
  solanaRpcUrl?: string | undefined;
  timeoutMs: number;
  metrics: TreasuryMetrics;
  reads: ChainReads;
  clock?: () => Date;
}

export class BalanceReader {
  private readonly clients = new Map<string, PublicClient>();
  /** The last figure read of each address, for when the chain cannot answer; the least recently read goes when full. */
  private readonly lastKnown = new LRUCache<string, { raw: bigint; at: Date }>({ max: MAX_CACHED });

  /** Where each fresh figure is kept for the fallback (table balance_readings). */
  private readonly knex: Knex;
  private readonly rpcUrls: Readonly<Record<string, string>>;
  private readonly timeoutMs: number;
  private readonly metrics: TreasuryMetrics;
  private readonly clock: () => Date;
  /** Reads on the Solana RPC (TREASURY_SOLANA_RPC_URL), when one is configured. */
  private readonly solana: SolanaTokenReader | undefined;
  /** Where each read waits for its tenant's place (./chain-read-admission.ts). */
  private readonly reads: ChainReads;

  /** The reader of TREASURY_RPC_URLS and TREASURY_SOLANA_RPC_URL, each read bounded by TREASURY_RPC_TIMEOUT_MS. */
  static fromConfig(
    config: Pick<AppConfig, 'rpcUrls' | 'solanaRpcUrl' | 'rpcTimeoutMs'>,
    deps: Omit<BalanceReaderDeps, 'rpcUrls' | 'solanaRpcUrl' | 'timeoutMs'>,
  ): BalanceReader {
    const { rpcUrls, solanaRpcUrl, rpcTimeoutMs: timeoutMs } = config;
    return new BalanceReader({ ...deps, rpcUrls, solanaRpcUrl, timeoutMs });
  }

  constructor(deps: BalanceReaderDeps) {
    this.knex = deps.knex;
    this.reads = deps.reads;
    this.solana = deps.solanaRpcUrl ? new SolanaTokenReader(deps.solanaRpcUrl, deps.timeoutMs) : undefined;
    this.rpcUrls = deps.rpcUrls;
    this.timeoutMs = deps.timeoutMs;
    this.metrics = deps.metrics;
    this.clock = deps.clock ?? (() => new Date());
  }

  private client(chain: ChainInfo): PublicClient {
    let client = this.clients.get(chain.network);
    if (!client) {
      const url = this.rpcUrls[chain.network];
      if (!url)
        throw new AppError('network_not_supported', {
          message: `No RPC endpoint is configured for ${chain.network} (TREASURY_RPC_URLS).`,
          fields: { network: chain.network },
        });
      client = createPublicClient({ transport: http(url, { timeout: this.timeoutMs, retryCount: 0 }) }) as PublicClient;
      this.clients.set(chain.network, client);
    }
    return client;
  }

  async usdcBalance(tenant: string, chain: AnyChainInfo, address: string): Promise<BalanceReading> {
    const key = `${chain.network}|${addressKey(chain, chain.usdc)}|${addressKey(chain, address)}`;
    const read = this.rawBalanceRead(chain, address);
    const base = { network: chain.network, asset: chain.usdc, address };
    const stop = this.metrics.balanceReadDuration.startTimer({ network: chain.network });
    try {
      // The RPC's failure is settled inside the admitted read; a refusal of the admission passes the fallback by.
      const outcome = await this.reads.run(tenant, () =>
        read().then(
          (raw) => ({ raw }),
          (failure: unknown) => ({ failure }),
        ),
      );
      if ('failure' in outcome) return await this.lastFigure(chain, key, base, outcome.failure);
      const { raw } = outcome;
      const at = this.clock();
      this.lastKnown.set(key, { raw, at });
      await this.store(chain, address, raw, at);
      this.metrics.balanceReads.inc({ network: chain.network, outcome: 'fresh' });
      return {
        ...base,
        balance_raw: raw.toString(),
        balance_usd: formatUsd(raw),
        stale: false,
        updated_at: at.toISOString(),
      };
    } finally {
      stop();
    }
  }

  /** The last figure known of `key` (this process's, else PostgreSQL's), stale, once the RPC failed; else `chain_unavailable`. */
  private async lastFigure(
    chain: AnyChainInfo,
    key: string,
    base: Pick<BalanceReading, 'network' | 'asset' | 'address'>,
    failure: unknown,
  ): Promise<BalanceReading> {
    const known = newer(this.lastKnown.get(key), await this.stored(chain, base.address));
    if (!known) {
      this.metrics.balanceReads.inc({ network: chain.network, outcome: 'unavailable' });
      throw chainUnavailable(chain, failure);
    }
    this.metrics.balanceReads.inc({ network: chain.network, outcome: 'stale' });
    return {
      ...base,
      balance_raw: known.raw.toString(),
      balance_usd: formatUsd(known.raw),
      stale: true,
      updated_at: known.at.toISOString(),
    };
  }

  /**
   * How the chain's USDC balance of `address` is read: `balanceOf` on an EVM chain, the associated token
   * account on a Solana one. No endpoint for the chain → `network_not_supported`, before anything is read.
   */
  private rawBalanceRead(chain: AnyChainInfo, address: string): () => Promise<bigint> {
    if (chain.family === 'svm') {
      const solana = this.solana;
      if (!solana)
        throw new AppError('network_not_supported', {
          message: `No Solana RPC endpoint is configured (TREASURY_SOLANA_RPC_URL).`,
          fields: { network: chain.network },
        });
      return () => solana.tokenBalance(address, chain.usdc);
    }
    const client = this.client(chain);
    return () =>
      client.readContract({
        address: chain.usdc,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [address as `0x${string}`],
      });
  }

  /** Keeps a fresh figure for the fallback; a figure older than the one stored (another process read later) is not written. */
  private async store(chain: AnyChainInfo, address: string, raw: bigint, at: Date): Promise<void> {
    await this.knex
      .raw(
        `INSERT INTO balance_readings (network, asset, address, balance_raw, read_at) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (network, asset, address) DO UPDATE SET balance_raw = EXCLUDED.balance_raw, read_at = EXCLUDED.read_at
          WHERE balance_readings.read_at < EXCLUDED.read_at`,
        [chain.network, addressKey(chain, chain.usdc), addressKey(chain, address), raw.toString(), at],
      )
      // The figure is still answered and kept in this process; only the fallback of other processes misses it.
      .catch(() => undefined);
  }

  /** The figure kept in PostgreSQL, if any (none when PostgreSQL is unreachable too). */
  private async stored(chain: AnyChainInfo, address: string): Promise<{ raw: bigint; at: Date } | undefined> {
    try {
      const row = (await this.knex('balance_readings')
        .where({ network: chain.network, asset: addressKey(chain, chain.usdc), address: addressKey(chain, address) })
        .first('balance_raw', 'read_at')) as { balance_raw: string; read_at: Date } | undefined;
      return row ? { raw: BigInt(row.balance_raw), at: row.read_at } : undefined;
    } catch {
      return undefined;
    }
  }

  /** ERC-20 `allowance(owner, spender)` on the chain's USDC, read now (no cache); `chain_unavailable` when the RPC fails. */
  async usdcAllowance(tenant: string, chain: ChainInfo, owner: `0x${string}`, spender: `0x${string}`): Promise<bigint> {
    return this.readNow(tenant, chain, (client) =>
      client.readContract({ address: chain.usdc, abi: erc20Abi, functionName: 'allowance', args: [owner, spender] }),
    );
  }

  /** EIP-2612 `nonces(owner)` on the chain's USDC, read now (no cache); `chain_unavailable` when the RPC fails. */
  async usdcPermitNonce(tenant: string, chain: ChainInfo, owner: `0x${string}`): Promise<bigint> {
    return this.readNow(tenant, chain, (client) =>
      client.readContract({ address: chain.usdc, abi: EIP2612_NONCES_ABI, functionName: 'nonces', args: [owner] }),
    );
  }

  /** A read on the chain's RPC, now (no cache, never stale); an RPC failure is `chain_unavailable`. */
  private async readNow<T>(tenant: string, chain: ChainInfo, read: (client: PublicClient) => Promise<T>): Promise<T> {
    const client = this.client(chain);
    return this.reads.run(tenant, () =>
      read(client).catch((err: unknown) => {
        throw chainUnavailable(chain, err);
      }),
    );
  }

  /**
   * A transaction and its receipt with how deep it is (blocks from its own to the head, its own included), or
   * null while the RPC knows no mined transaction by that hash.
   */
  async minedTransaction(tenant: string, chain: ChainInfo, hash: Hash): Promise<MinedTransaction | null> {
    const client = this.client(chain);
    return this.reads.run(tenant, () => this.readMined(chain, client, hash));
  }

  /** The three requests of `minedTransaction`, its RPC's failure as `chain_unavailable`. */
  private async readMined(chain: ChainInfo, client: PublicClient, hash: Hash): Promise<MinedTransaction | null> {
    try {
      const [tx, receipt, head] = await Promise.all([
        client.getTransaction({ hash }),
        client.getTransactionReceipt({ hash }),
        client.getBlockNumber({ cacheTime: 0 }),
      ]);
      const confirmations = head >= receipt.blockNumber ? Number(head - receipt.blockNumber) + 1 : 0;
      return {
        to: tx.to,
        input: tx.input,
        status: receipt.status,
        logs: receipt.logs,
        blockNumber: receipt.blockNumber,
        confirmations,
      };
    } catch (err) {
      if (err instanceof TransactionNotFoundError || err instanceof TransactionReceiptNotFoundError) return null;
      throw chainUnavailable(chain, err);
    }
  }
}

/** An address as balance_readings keys it: EVM hex lower-cased; base58 (case-sensitive) as it is. */
function addressKey(chain: AnyChainInfo, address: string): string {
  return chain.family === 'evm' ? address.toLowerCase() : address;
}

/** `chain_unavailable` for a failed RPC call: the network, and the failure as `rpcFailure` keeps it. */
function chainUnavailable(chain: AnyChainInfo, err: unknown): AppError {
  return new AppError('chain_unavailable', { fields: { network: chain.network }, cause: rpcFailure(err) });
}

/** The later of two figures. */
function newer(
  a: { raw: bigint; at: Date } | undefined,
  b: { raw: bigint; at: Date } | undefined,
): { raw: bigint; at: Date } | undefined {
  if (!a || !b) return a ?? b;
  return b.at.getTime() > a.at.getTime() ? b : a;
}
