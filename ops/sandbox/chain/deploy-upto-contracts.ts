/**
 * Places what the x402 `upto` scheme needs at its canonical addresses on a local anvil chain:
 * Permit2 (0x000000000022D473030F116dDEE9F6B43aC78BA3), our x402UptoPermit2Proxy stand-in
 * (0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002) and our Multicall3 stand-in
 * (0xcA11bde05977b3631167028862bE2a173976CA11), all compiled by compile-upto-contracts.ts.
 *
 * Permit2 caches its chain id and its EIP-712 domain separator (which contains address(this)) as
 * immutables at construction, so code deployed elsewhere cannot be copied as is: a copy made on the same
 * chain id would keep signing for the deployment address. It is therefore deployed while anvil's chain
 * id is temporarily a different one (`anvil_setChainId`), from an impersonated throwaway address (no dev
 * account's nonce moves), its runtime code is read, the chain id is set back (also on failure) and the
 * code is placed at the canonical address with `anvil_setCode`. There `block.chainid != _CACHED_CHAIN_ID`,
 * so Permit2 rebuilds its domain separator from the current chain id and its own address on every call,
 * exactly the domain x402 clients sign for. The proxy and Multicall3 have no immutables: their compiled
 * runtime code is set directly. Run this before anything else uses the chain (the chain id changes
 * for one block). Refuses to run against anything but anvil.
 */
import { createPublicClient, http, parseAbi, parseEther, toHex, type Address, type Hex, type PublicClient } from 'viem';
import { PERMIT2_ADDRESS, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { compileUptoContracts, type UptoContractsArtifact } from './compile-upto-contracts.js';
import { assertAnvilChain } from './deploy-test-usdc.js';

export const PERMIT2: Address = PERMIT2_ADDRESS;
export const X402_UPTO_PERMIT2_PROXY: Address = x402UptoPermit2ProxyAddress;
export const MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** An arbitrary address with no known key: anvil impersonates it to send Permit2's constructor transaction. */
const PERMIT2_DEPLOYER: Address = '0x5a4db0c5f1e2c3d4a5b6c7d8e9f0a1b2c3d4e5f6';

/** Typed view of the Permit2 functions TypeScript callers use (a test checks each exists in the compiled ABI). */
export const permit2Abi = parseAbi([
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function nonceBitmap(address owner, uint256 wordPos) view returns (uint256)',
  'function allowance(address user, address token, address spender) view returns (uint160 amount, uint48 expiration, uint48 nonce)',
]);

export interface DeployUptoContractsOptions {
  rpcUrl: string;
  /** The chain id anvil was started with; checked against the node and restored after Permit2's deployment. */
  chainId: number;
  /** Cache directory for the compiled artifacts (see compile-upto-contracts.ts). */
  cacheDir?: string;
  /** Precompiled artifacts (skips compile/cache lookup). */
  artifact?: UptoContractsArtifact;
}

export interface DeployedUptoContracts {
  permit2: Address;
  uptoProxy: Address;
  multicall3: Address;
}

type Rpc = (method: string, params: unknown[]) => Promise<unknown>;

async function setCode(client: PublicClient, rpc: Rpc, address: Address, code: Hex, what: string): Promise<void> {
  await rpc('anvil_setCode', [address, code]);
  const placed = await client.getCode({ address });
  if (placed?.toLowerCase() !== code.toLowerCase())
    throw new Error(`anvil_setCode did not place ${what} at ${address}`);
}

/** Deploys Permit2 under a temporary chain id and returns its runtime code (immutables bound to that id). */
async function permit2RuntimeCode(client: PublicClient, rpc: Rpc, chainId: number, creationCode: Hex): Promise<Hex> {
  const temporaryChainId = chainId === 31337 ? 31338 : 31337;
  await rpc('anvil_setChainId', [temporaryChainId]);
  await rpc('anvil_impersonateAccount', [PERMIT2_DEPLOYER]);
  try {
    await rpc('anvil_setBalance', [PERMIT2_DEPLOYER, toHex(parseEther('1'))]);
    const hash = (await rpc('eth_sendTransaction', [
      { from: PERMIT2_DEPLOYER, data: creationCode, gas: toHex(5_000_000) },
    ])) as Hex;
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 20_000 });
    if (receipt.status !== 'success' || !receipt.contractAddress)
      throw new Error(`Permit2 deployment failed (tx ${hash}, status ${receipt.status})`);
    const runtime = await client.getCode({ address: receipt.contractAddress });
    if (!runtime || runtime === '0x')
      throw new Error(`no code at the fresh Permit2 deployment ${receipt.contractAddress}`);
    return runtime;
  } finally {
    await rpc('anvil_stopImpersonatingAccount', [PERMIT2_DEPLOYER]).catch(() => undefined);
    await rpc('anvil_setChainId', [chainId]);
  }
}

export async function deployUptoContracts(options: DeployUptoContractsOptions): Promise<DeployedUptoContracts> {
  const { rpcUrl, chainId } = options;
  await assertAnvilChain(rpcUrl, chainId);
  const artifact =
    options.artifact ?? compileUptoContracts(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir });
  // No `chain` on purpose: viem would otherwise check the chain id while it is the temporary one.
  const client = createPublicClient({
    transport: http(rpcUrl, { retryCount: 0 }),
    pollingInterval: 50,
  }) as PublicClient;
  const rpc: Rpc = (method, params) => client.request({ method: method as never, params: params as never });

  const { permit2, uptoProxy, multicall3 } = artifact.contracts;
  if (uptoProxy.hasImmutables || multicall3.hasImmutables)
    throw new Error(
      'the upto proxy and Multicall3 stand-ins must not use immutables (their compiled runtime code is placed as is)',
    );
  const permit2Runtime = await permit2RuntimeCode(client, rpc, chainId, permit2.bytecode);
  if ((await client.getChainId()) !== chainId)
    throw new Error(`anvil did not return to chain id ${chainId} after deploying Permit2`);

  await setCode(client, rpc, PERMIT2, permit2Runtime, 'Permit2');
  await setCode(client, rpc, X402_UPTO_PERMIT2_PROXY, uptoProxy.deployedBytecode, 'the x402 upto Permit2 proxy');
  await setCode(client, rpc, MULTICALL3, multicall3.deployedBytecode, 'Multicall3');
  return { permit2: PERMIT2, uptoProxy: X402_UPTO_PERMIT2_PROXY, multicall3: MULTICALL3 };
}
