/**
 * Deploys the sandbox's EIP-3009 test USDC on a local anvil chain. The minter is anvil dev account #0.
 * When the chain impersonates Base Sepolia (chain id 84532) the deployed runtime code, with its
 * immutable minter baked in, is copied to the real Base Sepolia USDC address with `anvil_setCode`, so
 * the default-asset tables of x402 clients and servers point at it; on other chain ids the token stays
 * at its deployment address. Refuses to run against anything but anvil (`web3_clientVersion`), since it
 * uses anvil-only RPC methods and must never touch a real network. Also tops up given accounts (the
 * facilitator) with ETH via `anvil_setBalance` when they hold less than 1 ETH.
 */
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  parseAbi,
  parseEther,
  type Abi,
  type Address,
  type Chain,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { compileTestUsdc, type TestUsdcArtifact } from './compile-test-usdc.js';
import { anvilDevAccount, MINTER_ACCOUNT_INDEX } from './anvil-dev-accounts.js';
import { redactUrl } from '../../../src/shared/redact-url.js';

/** USDC on Base Sepolia; the sandbox places its test token here when the chain id is 84532. */
export const BASE_SEPOLIA_USDC: Address = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
export const BASE_SEPOLIA_CHAIN_ID = 84532;

/**
 * Typed view of the TestUsdc functions TypeScript callers use (viem infers argument and result types from
 * it). The compiled ABI stays the source of truth; a test checks every entry here exists in it.
 */
export const testUsdcAbi = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function version() view returns (string)',
  'function decimals() view returns (uint8)',
  'function minter() view returns (address)',
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address account) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function mint(address to, uint256 amount) returns (bool)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function approve(address spender, uint256 value) returns (bool)',
  'function transferFrom(address from, address to, uint256 value) returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
]);

export interface DeployTestUsdcOptions {
  rpcUrl: string;
  /** The chain id anvil was started with; checked against the node. */
  chainId: number;
  /** Cache directory for the compiled artifact (see compile-test-usdc.ts). */
  cacheDir?: string;
  /** A precompiled artifact (skips compile/cache lookup). */
  artifact?: TestUsdcArtifact;
  /** Accounts to top up with 100 ETH when below 1 ETH (e.g. the facilitator). */
  fundAddresses?: Address[];
}

export interface DeployedTestUsdc {
  /** Where clients should use the token (the Base Sepolia USDC address on 84532). */
  usdc: Address;
  /** Where the constructor ran (differs from `usdc` when the code was copied). */
  deployedAt: Address;
  /** The minter (anvil dev account #0). */
  minter: Address;
  abi: Abi;
}

/** A viem chain object for the local node (no OP-stack or other network-specific behaviour). */
export function localChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: `treasury-sandbox-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    testnet: true,
  });
}

/** Throws unless the node at `rpcUrl` is anvil and reports `chainId`. */
export async function assertAnvilChain(rpcUrl: string, chainId: number): Promise<void> {
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) });
  const [version, actual] = await Promise.all([client.request({ method: 'web3_clientVersion' }), client.getChainId()]);
  if (!String(version).toLowerCase().startsWith('anvil'))
    throw new Error(
      `refusing to use ${redactUrl(rpcUrl)}: it is not anvil (web3_clientVersion ${JSON.stringify(version)})`,
    );
  if (actual !== chainId)
    throw new Error(`refusing to use ${redactUrl(rpcUrl)}: chain id ${actual}, expected ${chainId}`);
}

export async function deployTestUsdc(options: DeployTestUsdcOptions): Promise<DeployedTestUsdc> {
  const { rpcUrl, chainId } = options;
  await assertAnvilChain(rpcUrl, chainId);
  const artifact =
    options.artifact ?? compileTestUsdc(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir });
  const chain = localChain(chainId, rpcUrl);
  const transport = http(rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const minterKey = anvilDevAccount(MINTER_ACCOUNT_INDEX).privateKey;
  const minterAccount = privateKeyToAccount(minterKey);
  const wallet = createWalletClient({ chain, transport, account: minterAccount, pollingInterval: 100 });

  const hash = await wallet.deployContract({
    abi: artifact.abi,
    bytecode: artifact.bytecode,
    args: [minterAccount.address],
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success' || !receipt.contractAddress)
    throw new Error(`TestUsdc deployment failed (tx ${hash}, status ${receipt.status})`);
  const deployedAt = getAddress(receipt.contractAddress);

  let usdc = deployedAt;
  if (chainId === BASE_SEPOLIA_CHAIN_ID) {
    const runtime: Hex | undefined = await publicClient.getCode({ address: deployedAt });
    if (!runtime || runtime === '0x') throw new Error(`no code at the fresh TestUsdc deployment ${deployedAt}`);
    await publicClient.request({ method: 'anvil_setCode' as never, params: [BASE_SEPOLIA_USDC, runtime] as never });
    const placed = await publicClient.getCode({ address: BASE_SEPOLIA_USDC });
    if (placed?.toLowerCase() !== runtime.toLowerCase())
      throw new Error(`anvil_setCode did not place TestUsdc at ${BASE_SEPOLIA_USDC}`);
    usdc = BASE_SEPOLIA_USDC;
  }

  for (const address of options.fundAddresses ?? []) {
    const balance = await publicClient.getBalance({ address });
    if (balance < parseEther('1')) {
      await publicClient.request({
        method: 'anvil_setBalance' as never,
        params: [address, `0x${parseEther('100').toString(16)}`] as never,
      });
    }
  }

  return { usdc, deployedAt, minter: minterAccount.address, abi: artifact.abi };
}
