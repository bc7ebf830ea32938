/**
 * A real local chain for integration tests: anvil on a free port (chain id 84532 unless told otherwise),
 * Permit2 and the x402 upto proxy at their canonical addresses, the EIP-3009 test USDC at the Base
 * Sepolia USDC address, the faucet and the local x402 facilitator, all on 127.0.0.1 with silent logs. Start one per test file in `before`, stop it in `after`
 * (useTestChain registers both).
 * Also: token balance reads, plain USDC transfers from a dev account, faucet funding helpers, and the one file a compile wrote to an artifact cache. Every key here is a public anvil dev key.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { createPublicClient, createWalletClient, http, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startLocalChain, type StartLocalChainOptions } from '../../ops/sandbox/chain/local-chain.js';
import { localChain, testUsdcAbi } from '../../ops/sandbox/chain/deploy-test-usdc.js';
import { anvilDevAccount, type DevAccount } from '../../ops/sandbox/chain/anvil-dev-accounts.js';
import { useInSuite } from './late-bound.js';

export { anvilDevAccount, type DevAccount };

/** The EIP712Domain struct of USDC's domain (no salt): name, version, chainId, verifyingContract. */
export const EIP712_DOMAIN_FIELDS = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
] as const;

export interface TestChain {
  rpcUrl: string;
  chainId: number;
  network: `eip155:${number}`;
  usdc: Address;
  faucetUrl: string;
  facilitatorUrl: string;
  facilitatorAddress: Address;
  permit2: Address;
  uptoProxy: Address;
  minter: Address;
  minterKey?: Hex;
  /** One registry holding the faucet's and facilitator's metrics. */
  registry: Registry;
  /** A viem public client on the chain (100 ms polling). */
  publicClient: PublicClient;
  stop(): Promise<void>;
}

export type StartTestChainOptions = Pick<StartLocalChainOptions, 'chainId' | 'anvilLogFile'>;

export async function startTestChain(options: StartTestChainOptions = {}): Promise<TestChain> {
  const registry = new Registry();
  const chain = await startLocalChain({
    ...options,
    registry,
    logger: pino({ level: process.env.TREASURY_TEST_CHAIN_LOG_LEVEL ?? 'silent' }),
  });
  const publicClient = createPublicClient({
    chain: localChain(chain.chainId, chain.rpcUrl),
    transport: http(chain.rpcUrl, { retryCount: 0 }),
    pollingInterval: 100,
  });
  return {
    rpcUrl: chain.rpcUrl,
    chainId: chain.chainId,
    network: chain.network,
    usdc: chain.usdc,
    faucetUrl: chain.faucetUrl,
    facilitatorUrl: chain.facilitatorUrl,
    facilitatorAddress: chain.facilitatorAddress,
    permit2: chain.permit2,
    uptoProxy: chain.uptoProxy,
    minter: chain.minter,
    minterKey: chain.minterKey,
    registry,
    publicClient: publicClient as PublicClient,
    stop: () => chain.stop(),
  };
}

/**
 * The test chain of the enclosing mocha suite: started in a `before` hook and stopped in an `after` hook
 * registered here, so the suite's own `before` hooks (registered after this call) run once it is up. The
 * handle reads through to the started chain (./late-bound.ts).
 */
export const useTestChain = (options?: StartTestChainOptions): TestChain =>
  useInSuite('the test chain', () => startTestChain(options));

/** Raw (6-decimal) token balance of `owner` on the chain at `rpcUrl` (default token: the chain's test USDC). */
export async function readTokenBalance(
  chain: Pick<TestChain, 'publicClient' | 'usdc'>,
  owner: Address,
  token: Address = chain.usdc,
): Promise<bigint> {
  return chain.publicClient.readContract({
    address: token,
    abi: testUsdcAbi,
    functionName: 'balanceOf',
    args: [owner],
  });
}

/**
 * A plain USDC `transfer` of `amount` (raw) from the dev account `from` to `to`, mined (a buyer paying around
 * x402, a seller moving its own money); its transaction hash. `gas` fixes the gas limit (a transaction meant to
 * revert).
 */
export async function transferUsdc(
  chain: Pick<TestChain, 'chainId' | 'rpcUrl' | 'usdc' | 'publicClient'>,
  from: DevAccount,
  to: Address,
  amount: bigint,
  gas?: bigint,
): Promise<Hex> {
  const wallet = createWalletClient({
    account: privateKeyToAccount(from.privateKey),
    chain: localChain(chain.chainId, chain.rpcUrl),
    transport: http(chain.rpcUrl),
  });
  const hash = await wallet.writeContract({
    address: chain.usdc,
    abi: testUsdcAbi,
    functionName: 'transfer',
    args: [to, amount],
    ...(gas ? { gas } : {}),
  });
  await chain.publicClient.waitForTransactionReceipt({ hash });
  return hash;
}

/**
 * Mints `amountUsd` test USDC to `address` through the faucet (and, with `approvePermit2`, has `address`
 * approve Permit2 for the maximum); throws unless it answers 200.
 */
export async function fundFromFaucet(
  chain: Pick<TestChain, 'faucetUrl'>,
  address: Address,
  amountUsd: string,
  options: { approvePermit2?: boolean } = {},
): Promise<{ tx_hash: Hex; amount_raw: string; balance_raw: string; permit2_approval_tx?: Hex }> {
  const request = {
    address,
    amount_usd: amountUsd,
    ...(options.approvePermit2 === undefined ? {} : { approve_permit2: options.approvePermit2 }),
  };
  const res = await fetch(`${chain.faucetUrl}/fund`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  const body = (await res.json()) as {
    tx_hash: Hex;
    amount_raw: string;
    balance_raw: string;
    permit2_approval_tx?: Hex;
  };
  if (res.status !== 200) throw new Error(`faucet answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/**
 * The artifact cache file in `dir`, asserting that it is the only file there and that its name matches
 * `pattern`; its name and its modification time.
 */
export function onlyCacheFile(dir: string, pattern: RegExp): { name: string; mtimeMs: () => number } {
  const files = fs.readdirSync(dir);
  assert.equal(files.length, 1);
  assert.match(files[0]!, pattern);
  const name = files[0]!;
  return { name, mtimeMs: () => fs.statSync(path.join(dir, name)).mtimeMs };
}
