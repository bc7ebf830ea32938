/**
 * Where an EIP-3009 authorization of a Treasury wallet was spent, if it was: the transaction of the token's
 * `AuthorizationUsed(authorizer, nonce)` event (at most one exists: the token spends a nonce once), searched
 * within the last `lookbackBlocks` blocks; and whether the nonce is spent or cancelled at all
 * (`authorizationState`). Used to resume a payout whose settlement answer was lost, and to tell an expired
 * payout that never moved money (its hold can be given back) from one that did.
 *
 * Defends: paying twice because a facilitator's answer was lost (the chain, not the answer, says whether the
 * transfer happened). Does not defend: a lying RPC endpoint; a use older than the look-back window (the nonce
 * is then known spent through `authorizationState`, without its transaction).
 */
import { createPublicClient, http, parseAbi, parseAbiItem, type Hex, type PublicClient } from 'viem';
import type { ChainInfo } from '../../shared/chain-registry.js';
import { AppError } from '../errors/app-error.js';
import { rpcFailure } from './rpc-failure.js';

const AUTHORIZATION_USED = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');
const AUTHORIZATION_STATE = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
]);

export type AuthorizationUse = { kind: 'used'; txHash: Hex | undefined } | { kind: 'unused' };

export class AuthorizationUseReader {
  private readonly clients = new Map<string, PublicClient>();

  constructor(
    private readonly rpcUrls: Readonly<Record<string, string>>,
    private readonly timeoutMs: number,
    private readonly lookbackBlocks = 100_000n,
  ) {}

  /** Whether `authorizer`'s `nonce` is spent on `chain`, with the spending transaction when it is in the window. */
  async find(chain: ChainInfo, authorizer: Hex, nonce: Hex): Promise<AuthorizationUse> {
    const client = this.client(chain);
    try {
      const head = await client.getBlockNumber({ cacheTime: 0 });
      const logs = await client.getLogs({
        address: chain.usdc,
        event: AUTHORIZATION_USED,
        args: { authorizer, nonce },
        fromBlock: head > this.lookbackBlocks ? head - this.lookbackBlocks : 0n,
        toBlock: head,
      });
      if (logs[0]) return { kind: 'used', txHash: logs[0].transactionHash ?? undefined };
      const spent = await client.readContract({
        address: chain.usdc,
        abi: AUTHORIZATION_STATE,
        functionName: 'authorizationState',
        args: [authorizer, nonce],
      });
      return spent ? { kind: 'used', txHash: undefined } : { kind: 'unused' };
    } catch (err) {
      throw new AppError('chain_unavailable', { fields: { network: chain.network }, cause: rpcFailure(err) });
    }
  }

  private client(chain: ChainInfo): PublicClient {
    let client = this.clients.get(chain.network);
    if (!client) {
      const url = this.rpcUrls[chain.network];
      if (!url) throw new AppError('network_not_supported', { fields: { network: chain.network } });
      client = createPublicClient({ transport: http(url, { timeout: this.timeoutMs, retryCount: 0 }) }) as PublicClient;
      this.clients.set(chain.network, client);
    }
    return client;
  }
}
