/**
 * Brings up the sandbox's whole local chain in one call: anvil (chain id 84532 by default) → Permit2,
 * the x402 upto Permit2 proxy and Multicall3 at their canonical addresses (first: Permit2's deployment
 * changes the chain id for one block) → TestUsdc deployed and placed at the Base Sepolia USDC address →
 * faucet (can also approve Permit2 for the funded address) → local x402 facilitator (exact and upto).
 * Used by the test harness and meant for `npm start`. stop() closes the servers, then anvil, in reverse
 * order; a failure half-way stops whatever already started. Every piece listens on 127.0.0.1 only.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Abi, Address, Hex } from 'viem';
import { startAnvil, SANDBOX_CHAIN_ID } from './anvil-process.js';
import { anvilDevAccount, FACILITATOR_ACCOUNT_INDEX, MINTER_ACCOUNT_INDEX } from './anvil-dev-accounts.js';
import { deployTestUsdc } from './deploy-test-usdc.js';
import { deployUptoContracts } from './deploy-upto-contracts.js';
import { startFaucet } from './faucet-server.js';
import { startFacilitator } from '../facilitator/facilitator-server.js';

export interface StartLocalChainOptions {
  chainId?: number;
  anvilPort?: number;
  faucetPort?: number;
  facilitatorPort?: number;
  /** anvil's output goes here (default: anvil runs --silent). */
  anvilLogFile?: string;
  /** Cache directory for the compiled TestUsdc, Permit2 and upto proxy artifacts. */
  cacheDir?: string;
  /** One registry for the faucet's and facilitator's metrics (default: one fresh registry each). */
  registry?: Registry;
  /** Logger for the faucet and facilitator (children named `faucet` / `facilitator`). */
  logger?: Logger;
}

export interface LocalChain {
  rpcUrl: string;
  chainId: number;
  network: `eip155:${number}`;
  usdc: Address;
  usdcAbi: Abi;
  minter: Address;
  /** Permit2 at its canonical address (0x000000000022D473030F116dDEE9F6B43aC78BA3). */
  permit2: Address;
  /** The x402 upto Permit2 proxy (our stand-in) at its canonical address (0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002). */
  uptoProxy: Address;
  /** Anvil dev key #0 (public test key): mints test USDC. */
  minterKey: Hex;
  faucetUrl: string;
  facilitatorUrl: string;
  facilitatorAddress: Address;
  stop(): Promise<void>;
}

export async function startLocalChain(options: StartLocalChainOptions = {}): Promise<LocalChain> {
  const chainId = options.chainId ?? SANDBOX_CHAIN_ID;
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  try {
    const anvil = await startAnvil({
      chainId,
      ...(options.anvilPort === undefined ? {} : { port: options.anvilPort }),
      ...(options.anvilLogFile === undefined ? {} : { logFile: options.anvilLogFile }),
    });
    stops.push(() => anvil.stop());
    const upto = await deployUptoContracts({
      rpcUrl: anvil.rpcUrl,
      chainId,
      ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
    });
    const facilitatorAccount = anvilDevAccount(FACILITATOR_ACCOUNT_INDEX);
    const token = await deployTestUsdc({
      rpcUrl: anvil.rpcUrl,
      chainId,
      fundAddresses: [facilitatorAccount.address],
      ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
    });
    const minterKey = anvilDevAccount(MINTER_ACCOUNT_INDEX).privateKey;
    const faucet = await startFaucet({
      rpcUrl: anvil.rpcUrl,
      chainId,
      usdc: token.usdc,
      minterKey,
      ...(options.faucetPort === undefined ? {} : { port: options.faucetPort }),
      ...(options.registry === undefined ? {} : { registry: options.registry }),
      ...(options.logger === undefined ? {} : { logger: options.logger.child({ component: 'faucet' }) }),
    });
    stops.push(() => faucet.stop());
    const facilitator = await startFacilitator({
      rpcUrl: anvil.rpcUrl,
      chainId,
      privateKey: facilitatorAccount.privateKey,
      ...(options.facilitatorPort === undefined ? {} : { port: options.facilitatorPort }),
      ...(options.registry === undefined ? {} : { registry: options.registry }),
      ...(options.logger === undefined ? {} : { logger: options.logger.child({ component: 'facilitator' }) }),
    });
    stops.push(() => facilitator.stop());
    return {
      rpcUrl: anvil.rpcUrl,
      chainId,
      network: `eip155:${chainId}`,
      usdc: token.usdc,
      usdcAbi: token.abi,
      minter: token.minter,
      permit2: upto.permit2,
      uptoProxy: upto.uptoProxy,
      minterKey,
      faucetUrl: faucet.url,
      facilitatorUrl: facilitator.url,
      facilitatorAddress: facilitator.address,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
